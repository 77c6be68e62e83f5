// The executor's approval routes (docs/approvals.md): an agent's own token may not decide an
// approval (its own output's least of all), the operator's may, recorded as `<actor> (http)`.
import { resolveCredentials } from "@idem/core";
import { JOURNAL_EVENTS } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createApiApp, createExecutorMetrics } from "../src/index.js";
import { testConfig } from "./helpers.js";

const OPERATOR = "operator-token-0123456789";
const AGENT = "writer-token-0123456789";

describe("the approval routes", () => {
  it("refuse an agent's token and take the operator's, naming the actor", async () => {
    await using tj = await tempJournal();
    const config = testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      extra: {
        api: { token: OPERATOR },
        credentials: { writer: { tokenEnv: "WRITER_TOKEN" } },
      },
    });
    const app = createApiApp({
      config,
      journal: tj.journal,
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
      credentials: resolveCredentials(config, { WRITER_TOKEN: AGENT }),
    });
    const output = { jobId: "w-1", agent: "writer", effects: [] };
    await tj.journal.outputs.record(output, { source: "cli", targets: [] });
    const claim = await tj.journal.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 3 });
    if (!claim) throw new Error("nothing claimed");
    const digest = claim.output.contentHash;
    await tj.journal.approvals.request(claim.lease, {
      digest,
      effects: [0],
      rules: ["r"],
      expiresAt: Date.now() + 3_600_000,
    });
    const post = (token: string, body: unknown) =>
      app.request("http://127.0.0.1/v1/approvals/w-1/approve", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const decision = { reason: "mine, trust me", actor: "writer" };
    expect((await post(AGENT, decision)).status).toBe(403);
    const listed = await app.request("http://127.0.0.1/v1/approvals", {
      headers: { authorization: `Bearer ${AGENT}` },
    });
    expect(listed.status).toBe(403);
    expect((await tj.journal.runs.latest("w-1"))?.state).toBe("awaiting");
    const ok = await post(OPERATOR, { reason: "checked", actor: "ana", digest });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ decision: "approved", actor: "ana (http)", digest });
    const [granted] = await tj.journal.events.list({
      jobId: "w-1",
      type: JOURNAL_EVENTS.APPROVAL_GRANTED,
    });
    expect(granted).toMatchObject({ actor: "ana (http)", data: { reason: "checked" } });
  });
});
