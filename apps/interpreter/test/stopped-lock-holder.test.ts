// A repository lock held by a stopped process (issue 18; docs/reliability.md, "A stopped holder of a
// repository lock"): the interpreter does not take the lock from it. Its apply fails LOCKED after
// the lock timeout, the run ends as the retry policy says (here at once: maxAttempts 1), and the run's
// error names the holder's pid and that it is stopped, for the on-call engineer. Nothing moved on
// the branch. Once that process is killed the kernel frees the lock, and the retried run is done.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { kindsOf, openEffects } from "@idem/core";
import type { AgentOutput } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  CLEAN,
  createWorkspace,
  openWorkspaceJournal,
  recordAll,
  verify,
} from "../../../test/chaos/interpreter-fixture.js";
import { createInterpreter } from "../src/index.js";

const FILE_LOCK = join(import.meta.dirname, "../../../packages/runtime/src/file-lock.ts");

/** Another process holding `path` with the real FileLock (as an interpreter mid-apply would). */
async function holder(path: string): Promise<ChildProcess> {
  const code = `
    import { FileLock } from ${JSON.stringify(FILE_LOCK)};
    await new FileLock(${JSON.stringify(path)}).acquire();
    process.stdout.write("held\\n");
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@idem/source", "--input-type=module", "-e", code],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once("data", () => resolve());
    child.once("exit", (c) => reject(new Error(`the holder exited (${c}) before taking the lock`)));
  });
  return child;
}

async function waitStopped(pid: number): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`process ${pid} did not stop`);
}

describe("a repository lock held by a stopped process", () => {
  it("the run fails LOCKED naming the stopped holder, nothing moves; killed, the retried run is done", async () => {
    await using dir = await tempDir("idem-stopped-holder-");
    const ws = await createWorkspace(dir.path, { leaseMs: 120_000, maxAttempts: 1 });
    const journal = await openWorkspaceJournal(ws);
    const effects = openEffects(ws.config, { kinds: kindsOf(ws.config, { lockTimeoutMs: 300 }) });
    const gitDir = execFileSync("git", ["rev-parse", "--absolute-git-dir"], {
      cwd: ws.repoPath,
      encoding: "utf8",
    }).trim();
    const h = await holder(join(gitDir, "idem", "lock"));
    try {
      h.kill("SIGSTOP");
      await waitStopped(h.pid as number);
      const output: AgentOutput = {
        jobId: "locked-1",
        agent: "writer",
        effects: [
          {
            kind: "git.commit",
            repo: "site",
            message: "one",
            files: [{ path: "one.txt", content: "1\n" }],
          },
        ],
      };
      await recordAll(journal, ws.config, [output]);
      const head = execFileSync("git", ["rev-parse", "main"], { cwd: ws.repoPath }).toString();
      const logger = pino({ level: "silent" });
      const interp = createInterpreter({ config: ws.config, journal, effects, logger });
      const first = await interp.drain();
      expect(first.runs.dead).toBe(1);
      expect(first.dead[0]?.error).toContain("LOCKED");
      expect(first.dead[0]?.error).toContain(`pid ${h.pid}`);
      expect(first.dead[0]?.error).toMatch(/stopped \(SIGSTOP or a debugger\)/);
      expect(execFileSync("git", ["rev-parse", "main"], { cwd: ws.repoPath }).toString()).toBe(
        head,
      );

      // The on-call engineer kills the stopped process; the kernel frees the lock at once.
      h.kill("SIGKILL");
      await new Promise((r) => h.once("exit", r));
      await journal.runs.replay({ all: true }, { actor: "test" });
      const second = await interp.drain();
      expect(second.runs.done).toBe(1);
      expect(await verify(ws, journal, [output])).toEqual(CLEAN);
    } finally {
      h.kill("SIGCONT");
      h.kill("SIGKILL");
      await effects.close();
      await journal.close();
    }
  }, 120_000);
});
