import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { createBackoff, retry, retryAfter, scheduledDelay, sleep } from "../src/index.js";

describe("createBackoff", () => {
  it("doubles from the first delay up to the cap, and starts over after reset", () => {
    const b = createBackoff({ initialMs: 50, maxMs: 300 });
    expect([b.next(), b.next(), b.next(), b.next(), b.next()]).toEqual([50, 100, 200, 300, 300]);
    b.reset();
    expect(b.next()).toBe(50);
  });

  it("grows by the given factor", () => {
    const b = createBackoff({ initialMs: 10, maxMs: 1_000, factor: 3 });
    expect([b.next(), b.next(), b.next()]).toEqual([10, 30, 90]);
  });
});

describe("scheduledDelay", () => {
  it("repeats the schedule's last step and falls back for an empty schedule", () => {
    expect([0, 1, 2, 7].map((a) => scheduledDelay([100, 500], a, 9))).toEqual([100, 500, 500, 500]);
    expect(scheduledDelay([], 3, 9)).toBe(9);
    expect(scheduledDelay([100, 500], -1, 9)).toBe(100);
  });
});

describe("retry", () => {
  it("returns the first success and tells each retry its error and delay", async () => {
    let calls = 0;
    const told: [string, number][] = [];
    const value = await retry(
      async () => {
        calls++;
        if (calls < 3) throw new Error(`fail ${calls}`);
        return "ok";
      },
      { initialMs: 1, maxMs: 2, onRetry: (e, ms) => told.push([(e as Error).message, ms]) },
    );
    expect(value).toBe("ok");
    expect(calls).toBe(3);
    expect(told).toEqual([
      ["fail 1", 1],
      ["fail 2", 2],
    ]);
  });

  it("throws the error that retryable refuses, without another attempt", async () => {
    let calls = 0;
    const refused = new Error("permanent");
    await expect(
      retry(
        async () => {
          calls++;
          throw calls === 1 ? new Error("transient") : refused;
        },
        { initialMs: 1, maxMs: 1, retryable: (e) => e !== refused },
      ),
    ).rejects.toBe(refused);
    expect(calls).toBe(2);
  });

  it("retryAfter starts from a failure the caller saw and refuses it at once when told to", async () => {
    const first = new Error("first");
    let calls = 0;
    await expect(
      retryAfter(first, async () => ++calls, { initialMs: 1, maxMs: 1, retryable: () => false }),
    ).rejects.toBe(first);
    expect(calls).toBe(0);
    expect(await retryAfter(first, async () => ++calls, { initialMs: 1, maxMs: 1 })).toBe(1);
  });

  it("an aborted signal cuts the wait short", async () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    const value = await retry(
      async () => {
        if (++calls === 1) throw new Error("once");
        return calls;
      },
      // An hour's backoff: only the aborted signal lets this test finish.
      { initialMs: 3_600_000, maxMs: 3_600_000, signal: controller.signal },
    );
    expect(value).toBe(2);
  });
});

describe("sleep", () => {
  it("resolves at once on an aborted signal and leaves no listener behind", async () => {
    const controller = new AbortController();
    const pending = sleep(3_600_000, controller.signal);
    controller.abort();
    await pending;
    const signal = new AbortController().signal;
    await sleep(1, signal);
    await sleep(1, signal);
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });
});
