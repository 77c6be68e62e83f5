import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { TargetTurns } from "../src/interpret/target-turns.js";

const T = "repo:site@main";
const never = new AbortController().signal;
/** Whether a promise has settled after the pending callbacks ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

/** Claim `id` of a run, its token the same for every call of a test unless it says otherwise. */
const r = (id: number, token = `t${id}`) => ({ id, token });

describe("TargetTurns", () => {
  it("gives a later run its turn once the earlier one hands the target over, with the ticket it queued", async () => {
    const turns = new TargetTurns();
    expect(turns.join(r(1), [T])).toBe(false);
    expect(turns.join(r(2), [T, "root:x"])).toBe(true);
    expect(await turns.turn(2, "root:x", never)).toBeUndefined();
    const waiting = turns.turn(2, T, never);
    expect(await settled(waiting)).toBe(false);
    const ticket = { state: "queued" as const };
    turns.handOver(r(1), T, ticket);
    expect(await waiting).toBe(ticket);
    // Waiting for it to land: not while the ticket is queued.
    const landed = turns.turn(2, T, never, true);
    expect(await settled(landed)).toBe(false);
    turns.handOver(r(1), T);
    expect(await landed).toBeUndefined();
  });

  it("blocks the later runs behind one that ended before its effects on the target, unless it finished", async () => {
    const turns = new TargetTurns();
    turns.join(r(1), [T]);
    turns.join(r(2), [T]);
    turns.join(r(3), [T]);
    const second = turns.turn(2, T, never);
    turns.leave(r(1), false);
    await expect(second).rejects.toSatisfy((e) => isIdemError(e, "ORDER_BLOCKED"));
    turns.leave(r(2), false);
    turns.leave(r(3), false);
    // Once nothing waits behind it, the blocked place is gone: a run claimed later is not blocked.
    turns.join(r(4), [T]);
    expect(await turns.turn(4, T, never)).toBeUndefined();
    // A run that finished (done or dead) lets the later ones go ahead.
    turns.join(r(5), [T]);
    turns.join(r(6), [T]);
    const sixth = turns.turn(6, T, never);
    turns.leave(r(4), true);
    turns.leave(r(5), true);
    expect(await sixth).toBeUndefined();
  });

  it("makes the later runs wait again when the earlier one's queued apply failed, until it queues again", async () => {
    const turns = new TargetTurns();
    turns.join(r(1), [T]);
    turns.join(r(2), [T]);
    const failed = { state: "failed" as const };
    turns.handOver(r(1), T, failed);
    const waiting = turns.turn(2, T, never);
    expect(await settled(waiting)).toBe(false);
    turns.reopen(r(1), T);
    expect(await settled(waiting)).toBe(false);
    const again = { state: "queued" as const };
    turns.handOver(r(1), T, again);
    expect(await waiting).toBe(again);
  });

  it("keeps a run claimed again apart from its lost claim: what the old claim does later touches nothing of the new one's place", async () => {
    const turns = new TargetTurns();
    // Claims of runs 4 and 5 whose leases were lost, then 4 and 5 claimed again (new tokens).
    turns.join(r(4, "old"), [T]);
    turns.join(r(5, "old"), [T]);
    turns.join(r(4, "new"), [T]);
    turns.join(r(5, "new"), [T]);
    const fifth = turns.turn(5, T, never, true);
    // The old claim of 4 ends (lease lost) after the new one joined: 4 is still held, still open.
    turns.leave(r(4, "old"), false);
    turns.handOver(r(4, "old"), T);
    expect(await settled(fifth)).toBe(false);
    // Only the new claim's hand-over lets 5 go.
    turns.handOver(r(4, "new"), T);
    expect(await fifth).toBeUndefined();
  });

  it("answers a waiting turn at once when the interpreter stops", async () => {
    const turns = new TargetTurns();
    turns.join(r(1), [T]);
    turns.join(r(2), [T]);
    const stop = new AbortController();
    const held = { taken: false };
    const effect = turns.effectTurn(r(2), T, held, { last: true, early: false }, stop.signal);
    const taking = effect.take();
    expect(await settled(taking)).toBe(false);
    stop.abort();
    await expect(taking).rejects.toSatisfy((e) => isIdemError(e, "ORDER_BLOCKED"));
  });
});
