// `queue.pollMs` (the embedded queue's fallback poll) reaches the embedded transport: the idle
// queue waits for work with the configured interval. Observed without timing: the journal (a real
// SQLite one) is given the optional `waitForWork` of the port, which notes the interval it is
// asked to wait and waits for the executor's stop.

import type { JournalStore, WorkKind } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createExecutor } from "../src/index.js";
import { testConfig, waitFor } from "./helpers.js";

/** The journal with a `waitForWork` that records each wait's interval and waits for the abort. */
function recordingWaits(journal: JournalStore) {
  const waits: { kind: WorkKind; ms: number }[] = [];
  const waitForWork = (kind: WorkKind, ms: number, signal?: AbortSignal) => {
    waits.push({ kind, ms });
    return new Promise<void>((resolve) => {
      if (signal?.aborted) resolve();
      else signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  };
  const wrapped = new Proxy(journal, {
    get(t, name, receiver) {
      if (name === "waitForWork") return waitForWork;
      const value = Reflect.get(t, name, receiver);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
  return { journal: wrapped, waits };
}

async function firstWait(queue: Record<string, number>, pollMs?: number) {
  const tj = await tempJournal();
  try {
    const config = testConfig({ dir: tj.dir, journalPath: tj.path, queue });
    const { journal, waits } = recordingWaits(tj.journal);
    const ex = createExecutor({
      config,
      journal,
      logger: silentLogger(),
      ...(pollMs === undefined ? {} : { pollMs }),
    });
    await ex.start();
    try {
      return await waitFor("the idle queue to wait for work", () =>
        waits.find((w) => w.kind === "jobs"),
      );
    } finally {
      await ex.stop();
    }
  } finally {
    await tj.dispose();
  }
}

describe("queue.pollMs", () => {
  it("is the interval the idle embedded queue waits for work", async () => {
    expect(await firstWait({ pollMs: 4_321 })).toEqual({ kind: "jobs", ms: 4_321 });
  });

  it("defaults to 100 ms", async () => {
    expect(await firstWait({})).toEqual({ kind: "jobs", ms: 100 });
  });

  it("createExecutor's own pollMs option wins over the config", async () => {
    expect(await firstWait({ pollMs: 4_321 }, 20)).toEqual({ kind: "jobs", ms: 20 });
  });
});
