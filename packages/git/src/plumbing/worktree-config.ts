import { lstatSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { runGit } from "./run-git.js";

interface ConfigSnapshot {
  stamp: string;
  at: number;
  volatile: boolean;
  reason: string | null;
  fileMode: boolean;
  attributesFile: string | null;
  /** Why `git apply --cached` could answer differently from the in-process apply, or null. */
  applyReason: string | null;
}

const FALSEY = new Set(["false", "no", "off", "0"]);
const TRUTHY = new Set(["true", "yes", "on", "1", ""]);

function stampOf(file: string): string {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.ino}:${st.size}:${st.mtimeMs}` : "-";
}

function exists(file: string): boolean {
  return lstatSync(file, { throwIfNoEntry: false }) !== undefined;
}

/**
 * The git configuration of one repository as it matters to idem's in-process work (the index and
 * working tree sync, the in-process patch apply), read again when a config file changed (or every
 * second when includes make that unknowable).
 */
export class WorktreeConfig {
  private snapshot: ConfigSnapshot | undefined;

  constructor(private readonly path: string) {}

  /**
   * Why the configuration rules out applying a patch in process (see patch-apply.ts), or null:
   * `apply.ignoreWhitespace` (git would match context loosely), an `apply.whitespace` value git
   * rejects (git apply would fail), `core.ignoreCase` (git would compare paths without case).
   */
  async applyReason(gitDir: string): Promise<string | null> {
    return (await this.configSnapshot(gitDir)).applyReason;
  }

  /** Why the configuration rules the in-process sync out, or null. */
  async configReason(gitDir: string): Promise<{ reason: string | null; fileMode: boolean }> {
    const snap = await this.configSnapshot(gitDir);
    if (snap.reason) return { reason: snap.reason, fileMode: snap.fileMode };
    const attrFiles = [join(gitDir, "info", "attributes")];
    if (snap.attributesFile) attrFiles.push(snap.attributesFile);
    if (!process.env.GIT_ATTR_NOSYSTEM) attrFiles.push("/etc/gitattributes");
    for (const f of attrFiles) {
      if (exists(f)) return { reason: `attributes file ${f}`, fileMode: snap.fileMode };
    }
    return { reason: null, fileMode: snap.fileMode };
  }

  /** The configuration as it matters here, read again when a config file changed. */
  private async configSnapshot(gitDir: string): Promise<ConfigSnapshot> {
    const home = process.env.HOME ?? homedir();
    const xdg = process.env.XDG_CONFIG_HOME || join(home, ".config");
    const files = [
      join(gitDir, "config"),
      join(gitDir, "config.worktree"),
      process.env.GIT_CONFIG_GLOBAL ?? join(home, ".gitconfig"),
      join(xdg, "git", "config"),
      process.env.GIT_CONFIG_SYSTEM ?? "/etc/gitconfig",
    ];
    const stamp = files.map(stampOf).join("|");
    let snap = this.snapshot;
    const now = Date.now();
    if (!snap || snap.stamp !== stamp || (snap.volatile && now - snap.at > 1000)) {
      const out = await runGit(this.path, ["config", "-z", "--list"]);
      const cfg = new Map<string, string>();
      let volatile = false;
      for (const item of out.stdout.toString("utf8").split("\0")) {
        if (!item) continue;
        const nl = item.indexOf("\n");
        const key = (nl < 0 ? item : item.slice(0, nl)).toLowerCase();
        const value = nl < 0 ? "" : item.slice(nl + 1);
        if (key === "include.path" || (key.startsWith("includeif.") && key.endsWith(".path")))
          volatile = true;
        cfg.set(key, value);
      }
      const isTrue = (k: string) => cfg.has(k) && TRUTHY.has((cfg.get(k) as string).toLowerCase());
      const isSet = (k: string) => cfg.has(k) && !FALSEY.has((cfg.get(k) as string).toLowerCase());
      let reason: string | null = null;
      for (const k of ["core.autocrlf", "core.fsmonitor", "core.worktree"]) {
        if (isSet(k)) reason ??= `${k} is set`;
      }
      for (const k of [
        "core.splitindex",
        "core.sparsecheckout",
        "core.ignorecase",
        "core.precomposeunicode",
        "index.skiphash",
        "index.sparse",
      ]) {
        if (isTrue(k)) reason ??= `${k} is on`;
      }
      let attributesFile = cfg.get("core.attributesfile") ?? join(xdg, "git", "attributes");
      if (attributesFile.startsWith("~/")) attributesFile = join(home, attributesFile.slice(2));
      let applyReason: string | null = null;
      const ignoreWs = cfg.get("apply.ignorewhitespace");
      if (ignoreWs !== undefined && !["no", "false", "never", "none"].includes(ignoreWs))
        applyReason = "apply.ignoreWhitespace is set";
      const ws = cfg.get("apply.whitespace");
      if (
        ws !== undefined &&
        !["warn", "nowarn", "error", "error-all", "strip", "fix"].includes(ws)
      )
        applyReason ??= "apply.whitespace has a value git rejects";
      // git reads any value but false as on here (adjusting folder names to the index case).
      if (isSet("core.ignorecase")) applyReason ??= "core.ignorecase is on";
      snap = {
        stamp,
        at: now,
        volatile,
        reason,
        fileMode: !(cfg.has("core.filemode") && FALSEY.has(cfg.get("core.filemode") as string)),
        attributesFile,
        applyReason,
      };
      this.snapshot = snap;
    }
    return snap;
  }
}
