// Crash safety around an approval (docs/approvals.md, "Crash safety"): the real interpreter process
// SIGKILLed at each fault point after an approval; another process, knowing nothing but the
// journal, goes on: the approved commit is applied once, the rejected one never. Killed before it
// parks a run (interpreter.before-await), nothing of the gated effect is applied and the next
// interpreter parks it.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture;
beforeEach(async () => {
  fx = await opsFixture({
    approvals: { rules: [{ name: "site", kind: "git.commit" }] },
    interpreter: { pollMs: 20, backoffMs: [20], leaseMs: 2_000 },
  });
});
afterEach(async () => {
  await fx.close();
});

const cfg = () => ["--config", fx.ws.config];
const commitsWith = (text: string) =>
  gitIn(fx.repoDir, "log", "--format=%s", "main")
    .split("\n")
    .filter((s) => s === text).length;

/** A job of a file write (not gated) then a commit (gated). */
async function record(jobId: string): Promise<void> {
  await fx.record(jobId, [
    { kind: "file.write", root: "outbox", path: `${jobId}.txt`, content: jobId },
    commitSpec(`${jobId}.txt`, jobId, `commit ${jobId}`),
  ]);
}

const POINTS = [
  "interpreter.after-claim",
  "interpreter.after-intent",
  "interpreter.after-apply",
  "interpreter.after-effect-record",
  "interpreter.before-done",
];

describe("a SIGKILL around an approval", () => {
  it("leaves each approved effect applied once and each rejected one never", async () => {
    for (const point of POINTS) {
      const ok = `ok-${point.split(".")[1]}`;
      const no = `no-${point.split(".")[1]}`;
      await record(ok);
      await record(no);
      await fx.interpret();
      expect((await fx.journal.runs.latest(ok))?.state).toBe("awaiting");
      const approved = await idem(["approve", ok, "--reason", "ok", "--as", "ana", ...cfg()]);
      expect(approved.code, approved.stderr).toBe(0);
      const rejected = await idem(["reject", no, "--reason", "no", "--as", "ana", ...cfg()]);
      expect(rejected.code, rejected.stderr).toBe(0);
      // The decision is durable before the interpreter can apply anything: it is killed at point.
      const killed = await idem(["interpreter", "--once", ...cfg()], {
        env: { IDEM_FAULT: point },
      });
      expect(killed.code, point).not.toBe(0);
      const next = await idem(["interpreter", "--once", ...cfg()], { timeoutMs: 180_000 });
      expect(next.code, `${point}: ${next.stderr}`).toBe(0);
      expect((await fx.journal.runs.latest(ok))?.state, point).toBe("done");
      expect(await fx.journal.runs.latest(no), point).toMatchObject({
        state: "dead",
        class: "rejected",
      });
      expect(commitsWith(`commit ${ok}`), point).toBe(1);
      expect(commitsWith(`commit ${no}`), point).toBe(0);
    }
  });

  it("killed before it parks a run, nothing gated is applied and the next interpreter parks it", async () => {
    await record("p-1");
    const killed = await idem(["interpreter", "--once", ...cfg()], {
      env: { IDEM_FAULT: "interpreter.before-await" },
    });
    expect(killed.code).not.toBe(0);
    expect((await fx.journal.runs.latest("p-1"))?.state).toBe("running");
    expect(commitsWith("commit p-1")).toBe(0);
    const next = await idem(["interpreter", "--once", ...cfg()], { timeoutMs: 180_000 });
    expect(next.code, next.stderr).toBe(0);
    expect((await fx.journal.runs.latest("p-1"))?.state).toBe("awaiting");
    expect(commitsWith("commit p-1")).toBe(0);
  });
});
