import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cleanEnv, IDEM_BIN, type RunResult } from "../../apps/cli/test/ops-helpers.js";

/**
 * docs/runbook.md as the suite reads it: each incident's test takes the commands it types from the
 * runbook's own ```sh blocks (`typed`), so a command the runbook changes is the command the test
 * runs, and one it drops fails the test that needs it.
 */

const RUNBOOK_FILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs/runbook.md");

/** The runbook's text. */
export const runbookText = (): string => readFileSync(RUNBOOK_FILE, "utf8");

/** Whether the heavier variants run (`npm run runbook:heavy`): more jobs, more rounds. */
export const HEAVY = process.env.IDEM_RUNBOOK_HEAVY === "1";

/**
 * The text of the section whose heading is `title` (`## title` or `### title`), up to the next
 * heading of the same or a higher level.
 * @throws when the runbook has no such section.
 */
export function section(title: string): string {
  const lines = runbookText().split("\n");
  const start = lines.findIndex((l) => /^#{2,3} /.test(l) && l.replace(/^#+ /, "") === title);
  if (start < 0) throw new Error(`docs/runbook.md has no section "${title}"`);
  const level = (lines[start] as string).indexOf(" ");
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const m = /^(#+) /.exec(lines[i] as string);
    if (m && (m[1] as string).length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start, end).join("\n");
}

/**
 * The commands of a section's ```sh blocks, in order: one per logical line (a `\` continuation
 * joined), a trailing `# comment` and comment-only lines dropped.
 */
export function commandsOf(sectionText: string): string[] {
  const out: string[] = [];
  const blocks = sectionText.matchAll(/^[ \t]*```sh\n([\s\S]*?)^[ \t]*```/gm);
  for (const b of blocks) {
    const logical = (b[1] as string).replace(/\\\n\s*/g, "");
    for (const raw of logical.split("\n")) {
      const line = stripComment(raw).trim();
      if (line !== "") out.push(line);
    }
  }
  return out;
}

/** A line without its shell comment: a `#` at the start of a word, outside quotes. */
function stripComment(line: string): string {
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(0, i);
  }
  return line;
}

/**
 * The one command of section `title` that `match` picks (a substring or a pattern), as the runbook
 * prints it (the same command written twice, at two steps, is one).
 * @throws when none matches (the runbook no longer says it) or more than one does.
 */
export function typed(title: string, match: string | RegExp): string {
  const hits = [
    ...new Set(
      commandsOf(section(title)).filter((c) =>
        typeof match === "string" ? c.includes(match) : match.test(c),
      ),
    ),
  ];
  if (hits.length !== 1)
    throw new Error(
      `docs/runbook.md "${title}": ${hits.length} commands match ${String(match)}: ${hits.join(" | ")}`,
    );
  return hits[0] as string;
}

let binDir: string | undefined;
/** A folder with an `idem` that runs the built CLI: what the person on call has on PATH. */
function idemOnPath(): string {
  if (binDir) return binDir;
  binDir = mkdtempSync(join(tmpdir(), "idem-runbook-bin-"));
  const shim = join(binDir, "idem");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${IDEM_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return binDir;
}

/**
 * Types `command` into a shell (`sh -c`) in `cwd`, as the person on call would, with `idem` on
 * PATH; `vars` replaces the runbook's placeholders first (`{ JOB: "hook" }`: every whole-word
 * JOB). Never throws for a failing command: its exit code is in the result.
 */
export function shell(
  command: string,
  options: { cwd: string; vars?: Record<string, string>; env?: Record<string, string> },
): Promise<RunResult & { command: string }> {
  let typedCommand = command;
  for (const [name, value] of Object.entries(options.vars ?? {})) {
    typedCommand = typedCommand.replace(
      new RegExp(`(?<![\\w-])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![\\w])`, "g"),
      value,
    );
  }
  return new Promise((resolvePromise, reject) => {
    const env = cleanEnv(options.env);
    env.PATH = `${idemOnPath()}:${env.PATH ?? ""}`;
    const child = spawn("sh", ["-c", typedCommand], { cwd: options.cwd, env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code: code ?? 1, stdout, stderr, command: typedCommand });
    });
    child.stdin.end();
  });
}
