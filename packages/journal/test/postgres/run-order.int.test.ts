import { type AgentOutput, canonicalJson, isIdemError, sha256Hex } from "@idem/schema";
import { ignoreServerShutdown, type PostgresHandle, startPostgres } from "@idem/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertRun, lockKey } from "../../src/store/postgres/outputs.js";
import { PostgresJournalStore } from "../../src/store/postgres/postgres-journal-store.js";

const TARGET = "file:shared";
const out = (jobId: string): AgentOutput => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "file.write", root: "shared", path: `${jobId}.txt`, content: jobId }],
});
const claimOptions = { owner: "claimer", leaseMs: 60_000, maxLeaseExpiries: 5 };

/** A raw client of the test's own, its teardown's shutdown notice let through. */
async function rawClient(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", ignoreServerShutdown);
  await c.connect();
  return c;
}

/**
 * Waits until `pending` settles or some backend waits for a lock (seen by `observer`, a connection
 * of its own): answers which came first. No timing: it polls until one of the two.
 */
async function settledOrWaiting(
  observer: pg.Client,
  pending: Promise<unknown>,
): Promise<"settled" | "waiting"> {
  let settled = false;
  void pending.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    if (settled) return "settled";
    const { rows } = await observer.query("SELECT 1 FROM pg_locks WHERE NOT granted LIMIT 1");
    if (rows.length > 0) return "waiting";
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("neither settled nor waiting for a lock within 60 s");
}

/** A transaction on `holder` that takes TARGET's lock first and writes output `jobId` and its run 1 later. */
async function holdTarget(holder: pg.Client): Promise<void> {
  await holder.query("BEGIN");
  await holder.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [lockKey.target, TARGET]);
}

async function writeHeld(holder: pg.Client, jobId: string): Promise<number> {
  const body = canonicalJson(out(jobId));
  await holder.query(
    `INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at)
     VALUES ($1, 'writer', $2, $3, 'executor', $4)`,
    [jobId, sha256Hex(body), body, Date.now()],
  );
  // A raw client answers int8 as a string.
  return Number(
    await insertRun(holder as unknown as pg.PoolClient, {
      jobId,
      generation: 1,
      targets: [TARGET],
      forceUnprobeable: false,
      now: Date.now(),
    }),
  );
}

/**
 * The per-target lock of the run insert (PostgreSQL only: SQLite has one writer at a time, so its
 * runs always commit in id order). Three connections: a holder transaction that takes a target's
 * lock and only then draws its run's id, the store writing a run on that target meanwhile, and an
 * observer reading pg_locks. With the lock, the store's statement waits before it draws its id, so
 * its run comes after the holder's in id order and in commit order; without the lock it commits
 * at once (a claimer would take it before the holder's earlier run), and with the id drawn before
 * the lock its id would be the smaller one though it commits last.
 */
describe("PostgreSQL only (SQLite has one writer at a time): runs on a target commit in id order", () => {
  let server: PostgresHandle;
  let n = 0;
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function setup() {
    const url = await server.createDatabase(`run_order_${++n}`);
    const j = await PostgresJournalStore.open(url);
    const holder = await rawClient(url);
    const observer = await rawClient(url);
    return {
      j,
      holder,
      observer,
      close: async () => {
        await holder.end();
        await observer.end();
        await j.close();
      },
    };
  }

  it("a record on a target another transaction holds waits for it, and its run follows in id order", async () => {
    const { j, holder, observer, close } = await setup();
    try {
      await holdTarget(holder);
      const recording = j.outputs.record(out("later"), { source: "executor", targets: [TARGET] });
      expect(await settledOrWaiting(observer, recording)).toBe("waiting");
      const earlier = await writeHeld(holder, "earlier");
      await holder.query("COMMIT");
      expect((await recording).status).toBe("recorded");
      const later = (await j.runs.latest("later"))?.id as number;
      expect(earlier).toBeLessThan(later);
      const first = await j.runs.claim(claimOptions);
      expect(first?.run.jobId).toBe("earlier");
      await j.runs.complete(first?.lease as NonNullable<typeof first>["lease"]);
      expect((await j.runs.claim(claimOptions))?.run.jobId).toBe("later");
    } finally {
      await close();
    }
  });

  it("a replay on a target another transaction holds waits for it, and its run follows in id order", async () => {
    const { j, holder, observer, close } = await setup();
    try {
      await j.outputs.record(out("replayed"), { source: "executor", targets: [TARGET] });
      const run = await j.runs.claim(claimOptions);
      await j.runs.complete(run?.lease as NonNullable<typeof run>["lease"]);
      await holdTarget(holder);
      const replaying = j.runs.replay({ jobIds: ["replayed"] }, { actor: "human" });
      expect(await settledOrWaiting(observer, replaying)).toBe("waiting");
      const earlier = await writeHeld(holder, "earlier");
      await holder.query("COMMIT");
      const [replayed] = await replaying;
      expect(earlier).toBeLessThan(replayed?.id as number);
      expect((await j.runs.claim(claimOptions))?.run.jobId).toBe("earlier");
    } finally {
      await close();
    }
  });
  it("a resolution waits for a claim under way on a later run of its targets, and then refuses (never two holders)", async () => {
    const { j, holder, observer, close } = await setup();
    try {
      await j.outputs.record(out("dead"), { source: "executor", targets: [TARGET] });
      const c = await j.runs.claim(claimOptions);
      if (!c) throw new Error("claim");
      await j.ledger.intend(c.lease, {
        key: "dead/0",
        idx: 0,
        kind: "http.request",
        specHash: "h",
      });
      await j.ledger.settle(c.lease, "dead/0", "uncertain");
      await j.runs.markDead(c.lease, { class: "uncertain", error: "timeout after send" });
      await j.outputs.record(out("later"), { source: "executor", targets: [TARGET] });
      // A claim of the later run, under way: its row is taken, the commit not yet made.
      await holder.query("BEGIN");
      await holder.query(
        `UPDATE runs SET state = 'running', lease_owner = 'other', lease_token = 'other-token',
         lease_until = due_at + 600000, due_at = due_at + 600000 WHERE job_id = 'later'`,
      );
      const resolving = j.ledger.resolve("dead", {
        decision: "applied",
        reason: "seen in the logs",
        actor: "oncall",
      });
      expect(await settledOrWaiting(observer, resolving)).toBe("waiting");
      await holder.query("COMMIT");
      const refused = await resolving.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isIdemError(refused, "INVALID_STATE")).toBe(true);
      expect((await j.runs.latest("dead"))?.state).toBe("dead");
      expect(await j.runs.claim(claimOptions)).toBeUndefined();
    } finally {
      await close();
    }
  });
});
