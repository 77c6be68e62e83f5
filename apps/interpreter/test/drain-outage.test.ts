// `drain()` (`idem interpreter --once`) rides out a journal outage wherever it lands, up to
// `outageLimitMs`. The real-server form is test/chaos/postgres-once-outage.int.test.ts; here the
// windows a server kill rarely hits are pinned: the journal (a real SQLite one) answers UNAVAILABLE,
// as a PostgreSQL journal does while its server is down, from the drain's reads between claims
// (what is left) and from its last read (the runs that ended dead).
import { openEffects } from "@idem/core";
import type { Effects } from "@idem/effects";
import type { JournalStore } from "@idem/journal";
import { IdemError } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLEAN,
  createWorkspace,
  mixedOutput,
  openWorkspaceJournal,
  recordAll,
  verify,
  type Workspace,
} from "../../../test/chaos/interpreter-fixture.js";
import { createInterpreter } from "../src/index.js";

const silent = pino({ level: "silent" });
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function setup(): Promise<{ ws: Workspace; journal: JournalStore; effects: Effects }> {
  const dir = await tempDir("idem-drain-outage-");
  const ws = await createWorkspace(dir.path, { leaseMs: 120_000, pollMs: 20 });
  const journal = await openWorkspaceJournal(ws);
  const effects = openEffects(ws.config);
  cleanup.push(async () => {
    await effects.close();
    await journal.close();
    await dir.remove();
  });
  return { ws, journal, effects };
}

type Outage = Partial<Record<"claim" | "active" | "nextDueAt" | "list", number>>;

/**
 * The journal, with the named calls answering UNAVAILABLE (as a PostgreSQL journal whose server is
 * down) the given number of times before they reach the journal again; `calls` counts those refused.
 */
function withOutage(
  journal: JournalStore,
  outage: Outage,
  error = () => new IdemError("UNAVAILABLE", "the journal's server is unavailable: ECONNREFUSED"),
) {
  const left = { ...outage };
  const refused: string[] = [];
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, name, receiver) {
        const value = Reflect.get(t, name, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          const key = name as keyof Outage;
          if ((left[key] ?? 0) > 0) {
            left[key] = (left[key] ?? 0) - 1;
            refused.push(String(name));
            return Promise.reject(error());
          }
          return value.apply(t, args);
        };
      },
    });
  const flaky = new Proxy(journal, {
    get(t, name, receiver) {
      const value = Reflect.get(t, name, receiver);
      if (name === "runs" || name === "events") return wrap(value as object);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
  return { journal: flaky, refused };
}

describe("drain() during a journal outage", () => {
  it("waits out UNAVAILABLE from its claims, its reads between claims and its last read, and drains everything once", async () => {
    const { ws, journal, effects } = await setup();
    const outputs = ["a", "b", "c"].map((id) => mixedOutput(`out-${id}`));
    await recordAll(journal, ws.config, outputs);
    const { journal: flaky, refused } = withOutage(journal, {
      claim: 2,
      active: 3,
      list: 2,
    });
    const interp = createInterpreter({
      config: ws.config,
      journal: flaky,
      effects,
      logger: silent,
    });
    const result = await interp.drain();
    expect(result.runs.done).toBe(3);
    expect(result.endedDead).toBe(false);
    // Every refusal was met (none left over): the drain went through each window.
    expect(refused.sort()).toEqual(
      ["active", "active", "active", "claim", "claim", "list", "list"].sort(),
    );
    expect(await verify(ws, journal, outputs)).toEqual(CLEAN);
  });

  it("any other failure of a read between claims ends the drain, as before (it is not waited out)", async () => {
    const { ws, journal, effects } = await setup();
    await recordAll(journal, ws.config, [mixedOutput("out-y")]);
    const { journal: flaky } = withOutage(
      journal,
      { active: Number.POSITIVE_INFINITY },
      () => new IdemError("INTEGRITY", "the journal file is damaged"),
    );
    const interp = createInterpreter({
      config: ws.config,
      journal: flaky,
      effects,
      logger: silent,
    });
    const err = await interp.drain().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as IdemError).code).toBe("INTEGRITY");
  });

  it("gives up with UNAVAILABLE once the journal has answered nothing for outageLimitMs", async () => {
    const { ws, journal, effects } = await setup();
    await recordAll(journal, ws.config, [mixedOutput("out-x")]);
    const { journal: flaky } = withOutage(journal, { claim: Number.POSITIVE_INFINITY });
    const interp = createInterpreter({
      config: ws.config,
      journal: flaky,
      effects,
      logger: silent,
      outageLimitMs: 0,
    });
    const err = await interp.drain().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(IdemError);
    expect((err as IdemError).code).toBe("UNAVAILABLE");
    expect((err as IdemError).message).toMatch(/has been unavailable for \d+ s/);
    // Nothing was applied and the run is left for the next drain.
    expect((await journal.runs.active()).pending).toBe(1);
  });
});
