import { afterEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { idem } from "./ops-helpers.js";

let fx: OpsFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("idem dlq retry of a dead-lettered job on the embedded queue", () => {
  it("says it is queued again on the embedded queue, with no stream sequence", async () => {
    fx = await opsFixture({ agents: { writer: { command: ["true"] } } });
    await fx.journal.jobs.enqueue({ jobId: "never", agent: "writer", input: {} });
    const claimed = await fx.journal.jobs.claimNext({ owner: "x", leaseMs: 60_000 });
    if (!claimed) throw new Error("nothing claimed");
    await fx.journal.deadLetters.add(
      "never",
      { class: "transient", error: "boom", deliveries: 3 },
      claimed.lease,
    );
    const r = await idem(["dlq", "retry", "never", "--config", fx.ws.config]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("queued again on the embedded queue (retry 1)");
    expect(r.stdout).not.toMatch(/seq 0/);
    expect((await fx.journal.jobs.get("never"))?.state).toBe("queued");
  });
});
