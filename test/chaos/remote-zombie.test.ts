// A zombie interpreter on a remote git target: its push is held by the server (a pre-receive hook
// that waits), it is SIGSTOPped past its lease, a second interpreter on another host takes the run
// over and pushes the same effect; released and resumed, the zombie's push reaches the ref update
// after the new holder's and is rejected by the compare-and-swap (the lease it pushed with is
// stale), and it changes nothing: not the remote branch, not the journal's settled effects.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AgentOutput } from "@idem/schema";
import { type GitDaemonHandle, startGitDaemon, tempDir } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  git,
  openWorkspaceJournal,
  REPO_ROOT,
  recordAll,
  sleep,
  startChild,
  trailerCounts,
} from "./interpreter-fixture.js";
import { createRemoteWorkspace } from "./remote-fixture.js";

let daemon: GitDaemonHandle;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/interpreter"], { cwd: REPO_ROOT, stdio: "ignore" });
  daemon = await startGitDaemon();
});
afterAll(async () => {
  await daemon?.stop();
});

/** Until `cond` holds, or fails after 60 s naming what it waited for. */
async function until(what: string, cond: () => boolean | Promise<boolean>): Promise<void> {
  const bound = Date.now() + 60_000;
  while (!(await cond())) {
    if (Date.now() > bound) throw new Error(`waited 60 s for ${what}`);
    await sleep(20);
  }
}

describe("a zombie interpreter on a remote git target", () => {
  it("pushes after the new holder, is rejected by the compare-and-swap and changes nothing", async () => {
    await using dir = await tempDir("idem-remote-zombie-");
    const site = daemon.createRepo("zombie-site");
    const docs = daemon.createRepo("zombie-docs");
    const gate = join(dir.path, "gate");
    // The first push to reach the server waits in pre-receive until the test releases it (at most
    // 120 s, so a failed test leaves no process behind); the ref update (the server's
    // compare-and-swap) comes after the hook.
    const hook = join(site.path, "hooks", "pre-receive");
    writeFileSync(
      hook,
      `#!/bin/sh\ncat >/dev/null\nif mkdir "${gate}.first" 2>/dev/null; then\n  touch "${gate}.held"\n  i=0; while [ ! -e "${gate}.release" ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i+1)); done\nfi\nexit 0\n`,
    );
    chmodSync(hook, 0o755);
    const interpreter = { leaseMs: 1500 };
    const zombieWs = createRemoteWorkspace(
      join(dir.path, "zombie"),
      { site, docs },
      { interpreter },
    );
    const takerWs = createRemoteWorkspace(
      join(dir.path, "taker"),
      { site, docs },
      {
        interpreter,
        journalPath: zombieWs.config.journal.path,
      },
    );
    const outputs: AgentOutput[] = [
      {
        jobId: "zombie",
        agent: "writer",
        effects: [1, 2].map((i) => ({
          kind: "git.commit" as const,
          repo: "site",
          message: `zombie ${i}`,
          files: [{ path: `z/${i}.txt`, content: `${i}\n` }],
        })),
      },
    ];
    const journal = await openWorkspaceJournal(zombieWs);
    try {
      await recordAll(journal, zombieWs.config, outputs);
      const before = await git(site.path, "rev-parse", "main");
      const zombie = startChild(zombieWs, { env: { IDEM_OWNER: "zombie" } });
      await until("the zombie's push held by the server", () => existsSync(`${gate}.held`));
      zombie.child.kill("SIGSTOP");
      await sleep(2000); // past the lease
      const taker = await startChild(takerWs, { env: { IDEM_OWNER: "taker" } }).done;
      expect(taker.code, taker.stderr).toBe(0);
      expect((await journal.runs.latest("zombie"))?.state).toBe("done");
      const settled = await journal.ledger.forJob("zombie");
      const tip = await git(site.path, "rev-parse", "main");
      expect(tip).not.toBe(before);
      const zombieWrites = async () =>
        (await journal.events.list({ jobId: "zombie" })).filter((e) => e.actor === "zombie");
      const writtenBefore = await zombieWrites();
      // The zombie's push goes on to the server's ref update, against a lease that is stale now.
      writeFileSync(`${gate}.release`, "");
      zombie.child.kill("SIGCONT");
      const resumed = await zombie.done;
      expect(resumed.signal).toBeNull();
      expect(await git(site.path, "rev-parse", "main")).toBe(tip);
      const counts = await trailerCounts(site.path);
      expect(counts.get("zombie/0")).toBe(1);
      expect(counts.get("zombie/1")).toBe(1);
      expect(await journal.ledger.forJob("zombie")).toEqual(settled);
      expect(await zombieWrites()).toEqual(writtenBefore);
    } finally {
      await journal.close();
    }
  });
});
