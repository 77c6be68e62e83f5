import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { enqueueJob } from "@idem/core";
import { silentLogger } from "@idem/runtime";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { countFile, testConfig, waitFor } from "./helpers.js";

describe("dead-letter alert on the embedded queue", () => {
  it("counts and alerts on jobs the claim dead-letters because their last delivery lost its lease", async () => {
    const posts: Record<string, unknown>[] = [];
    const hook = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        posts.push(JSON.parse(body) as Record<string, unknown>);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/alerts`;
    await using tj = await tempJournal();
    const config = testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      queue: { maxDeliver: 1, backoffMs: [], ackWaitMs: 1_000 },
      extra: { alerts: { deadLettersPerHour: 1, webhook: url } },
    });
    const input = { countFile: countFile(tj.dir) };
    for (const jobId of ["ghost-1", "ghost-2"]) {
      await enqueueJob({ jobId, agent: "writer", input }, { journal: tj.journal });
    }
    // An executor that died while running them: their only delivery is used, its lease lapses.
    for (let i = 0; i < 2; i++) {
      await tj.journal.jobs.claimNext({ owner: "dead-executor", leaseMs: 1 });
    }
    await new Promise((r) => setTimeout(r, 10));
    const ex = createExecutor({ config, journal: tj.journal, logger: silentLogger(), pollMs: 20 });
    await ex.start();
    try {
      await waitFor("the alert", () => posts.length > 0);
      const dead = await tj.journal.deadLetters.list();
      expect(dead.map((d) => [d.jobId, d.class]).sort()).toEqual([
        ["ghost-1", "infrastructure"],
        ["ghost-2", "infrastructure"],
      ]);
      expect((await ex.metrics.deadLetters.get()).values[0]?.value).toBe(2);
      expect(posts[0]).toMatchObject({ type: "idem.dead_letters", count: 2, threshold: 1 });
      expect(["ghost-1", "ghost-2"]).toContain(posts[0]?.jobId);
    } finally {
      await ex.stop();
      hook.close();
    }
  });
});
