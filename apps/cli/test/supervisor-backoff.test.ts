// `idem up`'s restarts: a child that keeps dying soon after its start waits longer each time; one
// that ran well (10 s or more by default) before it died starts again at the first delay.
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { type IdemChild, supervise } from "../src/ops/supervisor.js";

/** A child the test ends: `exit()` makes it exit with code 1 (a crash a restart may cure). */
function fakeChild(name: string): IdemChild & { exit(): void } {
  let done: (v: { code: number | null; signal: NodeJS.Signals | null }) => void = () => {};
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => {
    done = r;
  });
  // A signal ends it, as stop() expects of a real child.
  const kill = (signal: NodeJS.Signals = "SIGTERM") => {
    done({ code: null, signal });
    return true;
  };
  const child = Object.assign(new EventEmitter(), { pid: 4242, kill });
  return {
    name,
    child: child as unknown as IdemChild["child"],
    exited,
    exit: () => done({ code: 1, signal: null }),
  };
}

describe("idem up's supervisor", () => {
  it("doubles the restart delay while a child dies at once, and resets it after a healthy run", async () => {
    let clock = 0;
    const children: ReturnType<typeof fakeChild>[] = [];
    const events: string[] = [];
    const sup = supervise({
      processes: [{ name: "interpreter", args: [] }],
      config: null,
      onLine: () => {},
      onEvent: (m) => events.push(m),
      backoffMs: 1,
      maxBackoffMs: 64,
      now: () => clock,
      spawn: (name) => {
        const c = fakeChild(name);
        children.push(c);
        return c;
      },
    });
    const started = async (n: number) => {
      while (children.length < n) await new Promise((r) => setTimeout(r, 1));
      return children[n - 1] as ReturnType<typeof fakeChild>;
    };
    // Three quick deaths: 1, 2, 4 ms.
    for (let n = 1; n <= 3; n++) (await started(n)).exit();
    // A run of 10 s (by the clock the supervisor reads) before it dies: healthy, by default.
    const healthy = await started(4);
    clock += 10_000;
    healthy.exit();
    // Then a quick death again.
    (await started(5)).exit();
    await started(6);
    await sup.stop();
    const delays = events
      .map((e) => /restarting in (\d+) ms/.exec(e)?.[1])
      .filter((d) => d !== undefined)
      .map(Number);
    expect(delays).toEqual([1, 2, 4, 1, 2]);
  });
});
