// A failed delivery on the embedded queue with no backoff (`queue.backoffMs: []`): the failure makes
// the job due again at once, and the executor's own poll can claim it before the failed delivery has
// finished letting it go. That claim used to find the job still "being worked on", skip it and keep
// its lease, so the job waited out the whole lease (10 minutes here, far past the test's 60 s bound).
// The journal below is the real one; it only holds the answer of the failed delivery's `jobs.fail`
// until the poll has claimed the job again, so the window the bug needs is always there.
import { enqueueJob } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { countFile, runCounts, testConfig } from "./helpers.js";

const LEASE_MS = 600_000;
const WAIT_MS = 60_000;

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (Date.now() < end) {
    if (await done()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what} did not happen within ${WAIT_MS} ms (the lease is ${LEASE_MS} ms)`);
}

/** The journal, with `jobs.fail` answering only once the poll has claimed that job again. */
function holdingFailUntilReclaimed(journal: JournalStore): JournalStore {
  const claims = new Map<string, number>();
  const jobs = new Proxy(journal.jobs, {
    get(target, prop, receiver) {
      if (prop === "claimNext") {
        return async (...args: Parameters<JournalStore["jobs"]["claimNext"]>) => {
          const claimed = await target.claimNext(...args);
          if (claimed) claims.set(claimed.job.jobId, (claims.get(claimed.job.jobId) ?? 0) + 1);
          return claimed;
        };
      }
      if (prop === "fail") {
        return async (...args: Parameters<JournalStore["jobs"]["fail"]>) => {
          const jobId = args[0].jobId;
          // Counted before the fail: the poll may claim the job again before its answer is back.
          const before = claims.get(jobId) ?? 0;
          const answer = await target.fail(...args);
          await until(`the poll claiming ${jobId} again`, () => (claims.get(jobId) ?? 0) > before);
          return answer;
        };
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return new Proxy(journal, {
    get(target, prop, receiver) {
      if (prop === "jobs") return jobs;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("the embedded queue with no backoff", () => {
  it("runs a job whose delivery failed again at once, without waiting out its lease", async () => {
    await using tj = await tempJournal();
    const config = testConfig({
      dir: tj.dir,
      journalPath: tj.path,
      queue: { backoffMs: [], ackWaitMs: LEASE_MS, maxDeliver: 3 },
    });
    const counts = countFile(tj.dir);
    const executor = createExecutor({
      config,
      journal: holdingFailUntilReclaimed(tj.journal),
      logger: silentLogger(),
      pollMs: 5,
    });
    await executor.start();
    try {
      await enqueueJob(
        { jobId: "again-1", agent: "writer", input: { countFile: counts, failTimes: 1 } },
        { journal: tj.journal },
      );
      await until("the output of again-1", () => tj.journal.outputs.has("again-1"));
      // The failure and the retry: two runs, two deliveries, none burnt by a skipped claim.
      expect((await runCounts(counts))["again-1"]).toBe(2);
      expect((await tj.journal.jobs.get("again-1"))?.deliveries).toBe(2);
    } finally {
      await executor.stop();
    }
  });
});
