// What an apply makes durable before it returns, read off the system calls of a real process
// (strace -f -y): every object of the effect (loose, or a local batch's pack and its index) and
// every ref's lock file are fsynced before the first ref is renamed into place, so a power loss
// never leaves a ref pointing at a missing object or a torn ref file. `durable: false` fsyncs none of them, as git does by default.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runs, skipUnless } from "../../../test/support/skip.js";
import { GIT_DURABLE_DEFAULT } from "../src/kinds/git/git-resource.js";
import { addRepo, git, type Sandbox, sandbox } from "./helpers.js";

const APPLY_TWO = join(import.meta.dirname, "fixtures", "apply-two.mjs");

const hasStrace = runs("strace", "-V");

interface RefMove {
  ref: string;
  /** The lock file was fsynced (a completed fsync or fdatasync on it) before this rename. */
  lockSynced: boolean;
  /** Loose objects fsynced before this rename. */
  objectsSynced: number;
  /** Packs (a local batch's objects, `.pack` and `.idx` both) fsynced before this rename. */
  packsSynced: number;
}

/** The ref renames (`<ref>.lock` onto `<ref>`) of an `strace -f -y` log, in order. */
function refMoves(log: string): RefMove[] {
  const synced = new Set<string>();
  const moves: RefMove[] = [];
  let objectsSynced = 0;
  let packsSynced = 0;
  /** Per thread: the file its fsync in progress is on. */
  const open = new Map<string, string>();
  const done = (file: string) => {
    synced.add(file);
    if (/\/objects\/[0-9a-f]{2}\/[0-9a-f]+$/.test(file)) objectsSynced += 1;
    const pack = /^(.*\/objects\/pack\/pack-[0-9a-f]+)\.(pack|idx)$/.exec(file);
    const other = pack && `${pack[1]}.${pack[2] === "pack" ? "idx" : "pack"}`;
    if (other && synced.has(other)) packsSynced += 1;
  };
  for (const line of log.split("\n")) {
    const pid = line.split(" ", 1)[0] ?? "";
    const sync = /f(?:data)?sync\(\d+<([^>]+)>/.exec(line);
    if (sync) {
      if (/\) += 0$/.test(line)) done(sync[1] as string);
      else if (/<unfinished \.\.\.>$/.test(line)) open.set(pid, sync[1] as string);
      continue;
    }
    if (/<\.\.\. f(?:data)?sync resumed>\) += 0$/.test(line) && open.has(pid)) {
      done(open.get(pid) as string);
      open.delete(pid);
      continue;
    }
    const rename = /rename\("([^"]+)\.lock", "([^"]+)"\) = 0/.exec(line);
    if (rename && /\/refs\//.test(rename[2] as string)) {
      const ref = (rename[2] as string).slice((rename[2] as string).indexOf("/refs/") + 1);
      const lockSynced = synced.has(`${rename[1]}.lock`);
      moves.push({ ref, lockSynced, objectsSynced, packsSynced });
    }
  }
  return moves;
}

/** Applies two git.commit effects in a process of their own under strace; answers the log. */
async function traceApplyTwo(repo: string, durable: "default" | "false"): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "idem-git-durable-"));
  const log = join(dir, "strace.log");
  try {
    execFileSync(
      "strace",
      [
        "-f",
        "-y",
        "-qq",
        "-o",
        log,
        "-e",
        "trace=fsync,fdatasync,rename",
        process.execPath,
        APPLY_TWO,
        repo,
        durable,
      ],
      { stdio: "pipe" },
    );
    return readFileSync(log, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe(
  "git effects durability",
  skipUnless(hasStrace, "needs strace: an apply's fsyncs are read off it"),
  () => {
    let sb: Sandbox;
    afterEach(() => sb?.cleanup());

    it("is on by default: the objects and every ref's lock file are fsynced before a ref moves", async () => {
      expect(GIT_DURABLE_DEFAULT).toBe(true);
      sb = sandbox();
      const repo = addRepo(sb);
      const moves = refMoves(await traceApplyTwo(repo, "default"));
      // Two applies, each moving the branch, its key ref and the watermark.
      expect(moves.map((m) => m.ref).sort()).toEqual(
        [
          "refs/heads/main",
          "refs/heads/main",
          "refs/idem/b/main/k/job-1%2F0",
          "refs/idem/b/main/k/job-2%2F0",
          "refs/idem/b/main/w",
          "refs/idem/b/main/w",
        ].sort(),
      );
      for (const m of moves) expect(m).toMatchObject({ lockSynced: true });
      // A blob, a tree and a commit per effect, all on disk before its first ref moves: git.commit's
      // applies (each a batch of its own here) write them as one pack per batch.
      expect(moves[0]).toMatchObject({ objectsSynced: 0, packsSynced: 1 });
      expect(moves[3]).toMatchObject({ objectsSynced: 0, packsSynced: 2 });
      git(repo, "fsck", "--full", "--strict", "--no-dangling");
      expect(git(repo, "log", "--format=%s", "-2")).toBe("write f2\nwrite f1");
    });

    it("durable: false leaves the objects and refs to the page cache, as git does by default", async () => {
      sb = sandbox();
      const repo = addRepo(sb);
      const moves = refMoves(await traceApplyTwo(repo, "false"));
      expect(moves).toHaveLength(6);
      for (const m of moves)
        expect(m).toMatchObject({ lockSynced: false, objectsSynced: 0, packsSynced: 0 });
      expect(git(repo, "log", "--format=%s", "-2")).toBe("write f2\nwrite f1");
    });
  },
);
