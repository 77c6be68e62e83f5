import { IdemError } from "@idem/schema";
import { JOURNAL_EVENTS as E, effectEvent } from "../../domain/events.js";
import { toEffect } from "../../domain/records.js";
import type { EffectState } from "../../domain/states.js";
import { SETTLED_EFFECT_STATES, sqlStateList } from "../../domain/states.js";
import type { WriteDurability } from "../../port/durability.js";
import type { EffectRecord, IntendInput } from "../../port/ledger.js";
import type { Lease } from "../../port/runs.js";
import type { PostgresConnection } from "./connection.js";
import { UNLEASED } from "./dead-runs.js";
import { GroupCommit } from "./group-commit.js";
import { leaseLost } from "./held.js";
import { completeInOneTrip, intendInOneTrip, settleInOneTrip } from "./one-trip.js";
import { json, type RowOf } from "./rows.js";
import type * as tables from "./tables.js";

type EffectRow = RowOf<typeof tables.effects>;

// The first intents, settles and completions of many runs in one statement each (group commit, see GroupCommit):
// the statements of one-trip.ts over arrays, one element per run (`unnest ... WITH ORDINALITY`,
// `n` the batch order). Each run's write is fenced by its own lease (its row locked FOR SHARE or
// updated, in id order, token checked), its event written with it or not at all; each caller is
// answered as its own statement would answer it.

const SETTLED = sqlStateList(SETTLED_EFFECT_STATES);
const soonItem = (soon: boolean) =>
  soon ? ", set_config('synchronous_commit', 'off', true) AS soon" : "";

const settleSql = (soon: boolean) => `WITH b AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[],
      $7::text[], $8::text[], $9::text[], $10::text[])
    WITH ORDINALITY AS b(run_id, token, state, detail, key, generation, job_id, type, data, actor, n)),
  held AS (
    SELECT runs.id FROM runs JOIN b ON runs.id = b.run_id
    WHERE runs.state = 'running' AND runs.lease_token = b.token ORDER BY runs.id FOR SHARE OF runs),
  upd AS (
    UPDATE effects SET state = b.state, detail = COALESCE(b.detail, effects.detail), updated_at = $11
    FROM b WHERE effects.key = b.key AND effects.generation = b.generation
      AND b.run_id IN (SELECT id FROM held)
    RETURNING b.n),
  ev AS (
    INSERT INTO events (at, job_id, type, data, actor)
    SELECT $11, b.job_id, b.type, b.data, b.actor FROM b WHERE b.n IN (SELECT n FROM upd) ORDER BY b.n)
  SELECT b.n, b.run_id IN (SELECT id FROM held) AS held,
    b.n IN (SELECT n FROM upd) AS updated${soonItem(soon)}
  FROM b ORDER BY b.n`;

const completeSql = (soon: boolean) => `WITH b AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[])
    WITH ORDINALITY AS b(run_id, token, job_id, generation, data, actor, n)),
  open AS (
    SELECT DISTINCT ON (b.n) b.n, e.key, e.state FROM b JOIN effects e
      ON e.job_id = b.job_id AND e.generation = b.generation AND e.state NOT IN ${SETTLED}
    ORDER BY b.n, e.idx),
  upd AS (
    UPDATE runs SET state = 'done', ${UNLEASED}, due_at = NULL, last_error = NULL, class = NULL,
      updated_at = $7
    FROM b WHERE runs.id = b.run_id AND runs.state = 'running' AND runs.lease_token = b.token
      AND b.n NOT IN (SELECT n FROM open)
    RETURNING b.n, runs.id),
  del AS (DELETE FROM active_targets WHERE run_id IN (SELECT id FROM upd)),
  ev AS (
    INSERT INTO events (at, job_id, type, data, actor)
    SELECT $7, b.job_id, '${E.RUN_DONE}', b.data, b.actor FROM b WHERE b.n IN (SELECT n FROM upd)
    ORDER BY b.n)
  SELECT b.n, EXISTS (SELECT 1 FROM runs WHERE runs.id = b.run_id AND runs.state = 'running'
      AND runs.lease_token = b.token) AS held,
    b.n IN (SELECT n FROM upd) AS done, open.key, open.state${soonItem(soon)}
  FROM b LEFT JOIN open ON open.n = b.n ORDER BY b.n`;

const INTEND_SQL = `WITH b AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::int[],
      $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
    WITH ORDINALITY AS b(run_id, token, key, generation, job_id, idx, kind, spec_hash, detail, data, actor, n)),
  held AS (
    SELECT runs.id FROM runs JOIN b ON runs.id = b.run_id
    WHERE runs.state = 'running' AND runs.lease_token = b.token ORDER BY runs.id FOR SHARE OF runs),
  ins AS (
    INSERT INTO effects (key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at)
    SELECT b.key, b.generation, b.job_id, b.idx, b.kind, b.spec_hash, 'intended', b.detail, 1, $12
    FROM b WHERE b.run_id IN (SELECT id FROM held) ORDER BY b.n
    ON CONFLICT (key, generation) DO NOTHING RETURNING *),
  ev AS (
    INSERT INTO events (at, job_id, type, data, actor)
    SELECT $12, b.job_id, '${E.EFFECT_INTENDED}', b.data, b.actor
    FROM b JOIN ins ON ins.key = b.key AND ins.generation = b.generation ORDER BY b.n)
  SELECT b.n, b.run_id IN (SELECT id FROM held) AS held, to_json(ins.*) AS row
  FROM b LEFT JOIN ins ON ins.key = b.key AND ins.generation = b.generation ORDER BY b.n`;

const STATEMENTS = {
  settle: { durable: settleSql(false), soon: settleSql(true) },
  complete: { durable: completeSql(false), soon: completeSql(true) },
};

/** One settle under a lease, as `settleInOneTrip` takes it. */
export interface SettleRequest {
  lease: Lease;
  key: string;
  state: EffectState;
  detail: Record<string, unknown> | undefined;
}

const settled = (): PromiseSettledResult<void> => ({ status: "fulfilled", value: undefined });
const refused = (reason: unknown): PromiseSettledResult<void> => ({ status: "rejected", reason });

/** Settles of many runs in one statement; each answered as `settleInOneTrip` would answer it. */
async function settleBatch(
  c: PostgresConnection,
  requests: SettleRequest[],
  soon: boolean,
): Promise<PromiseSettledResult<void>[]> {
  const col = <T>(f: (r: SettleRequest) => T): T[] => requests.map(f);
  const rows = await c.statement<{ n: number; held: boolean; updated: boolean }>({
    name: `idem_settle_batch${soon ? "_soon" : ""}`,
    text: STATEMENTS.settle[soon ? "soon" : "durable"],
    values: [
      col((r) => r.lease.runId),
      col((r) => r.lease.token),
      col((r) => r.state),
      col((r) => json(r.detail)),
      col((r) => r.key),
      col((r) => r.lease.generation),
      col((r) => r.lease.jobId),
      col((r) => effectEvent(r.state)),
      col((r) => JSON.stringify({ key: r.key, generation: r.lease.generation, detail: r.detail })),
      col((r) => r.lease.owner),
      c.clock.now(),
    ],
  });
  return Promise.all(
    requests.map(async (r, i) => {
      const row = rows[i];
      if (row?.updated) return settled();
      if (!row?.held) return refused(await leaseLost(c.pool, r.lease));
      return refused(
        new IdemError(
          "INVALID_STATE",
          `effect ${r.key} has no intent in generation ${r.lease.generation}`,
        ),
      );
    }),
  );
}

/** One first intent under a lease, as `intendInOneTrip` takes it. */
export interface IntendRequest {
  lease: Lease;
  effect: IntendInput;
}

/** First intents of many runs in one statement; each answered as `intendInOneTrip` would. */
async function intendBatch(
  c: PostgresConnection,
  requests: IntendRequest[],
): Promise<PromiseSettledResult<EffectRecord | undefined>[]> {
  const col = <T>(f: (r: IntendRequest) => T): T[] => requests.map(f);
  const rows = await c.statement<{ n: number; held: boolean; row: EffectRow | null }>({
    name: "idem_intend_batch",
    text: INTEND_SQL,
    values: [
      col((r) => r.lease.runId),
      col((r) => r.lease.token),
      col((r) => r.effect.key),
      col((r) => r.lease.generation),
      col((r) => r.lease.jobId),
      col((r) => r.effect.idx),
      col((r) => r.effect.kind),
      col((r) => r.effect.specHash),
      col((r) => json(r.effect.detail)),
      col((r) => JSON.stringify({ key: r.effect.key, generation: r.lease.generation })),
      col((r) => r.lease.owner),
      c.clock.now(),
    ],
  });
  return Promise.all(
    requests.map(async (r, i): Promise<PromiseSettledResult<EffectRecord | undefined>> => {
      const row = rows[i];
      if (!row?.held) return { status: "rejected", reason: await leaseLost(c.pool, r.lease) };
      return { status: "fulfilled", value: row.row === null ? undefined : toEffect(row.row) };
    }),
  );
}

/** Completions of many runs in one statement; each answered as `completeInOneTrip` would. */
async function completeBatch(
  c: PostgresConnection,
  leases: Lease[],
  soon: boolean,
): Promise<PromiseSettledResult<void>[]> {
  const col = <T>(f: (l: Lease) => T): T[] => leases.map(f);
  type Done = { n: number; held: boolean; done: boolean; key: string | null; state: string | null };
  const rows = await c.statement<Done>({
    name: `idem_complete_batch${soon ? "_soon" : ""}`,
    text: STATEMENTS.complete[soon ? "soon" : "durable"],
    values: [
      col((l) => l.runId),
      col((l) => l.token),
      col((l) => l.jobId),
      col((l) => l.generation),
      col((l) => JSON.stringify({ generation: l.generation })),
      col((l) => l.owner),
      c.clock.now(),
    ],
  });
  return Promise.all(
    leases.map(async (l, i) => {
      const r = rows[i];
      if (r?.done) return settled();
      if (!r?.held || r.key === null) return refused(await leaseLost(c.pool, l));
      return refused(
        new IdemError(
          "INVALID_STATE",
          `run ${l.jobId}#${l.generation} cannot be done: effect ${r.key} is ${r.state}`,
        ),
      );
    }),
  );
}

/**
 * The first intents (durable), settles and completions (grouped per durability) of one
 * connection's runs: those that meet share a statement, a lone one is `intendInOneTrip`,
 * `settleInOneTrip` or `completeInOneTrip` as before.
 */
export function leaseWriteGroups(c: PostgresConnection) {
  const settles = (soon: boolean) =>
    new GroupCommit<SettleRequest, void>({
      alone: (r) => settleInOneTrip(c, r.lease, r.key, r.state, r.detail, { soon }),
      batch: (rs) => settleBatch(c, rs, soon),
      keyOf: (r) => r.key,
    });
  const completes = (soon: boolean) =>
    new GroupCommit<Lease, void>({
      alone: (l) => completeInOneTrip(c, l, { soon }),
      batch: (ls) => completeBatch(c, ls, soon),
      keyOf: (l) => String(l.runId),
    });
  const intends = new GroupCommit<IntendRequest, EffectRecord | undefined>({
    alone: (r) => intendInOneTrip(c, r.lease, r.effect),
    batch: (rs) => intendBatch(c, rs),
    keyOf: (r) => r.effect.key,
  });
  const groups = {
    settle: { soon: settles(true), durable: settles(false) },
    complete: { soon: completes(true), durable: completes(false) },
  };
  const which = (d: WriteDurability | undefined) => (d?.soon ? "soon" : "durable");
  return {
    intend: (lease: Lease, effect: IntendInput) => intends.submit({ lease, effect }),
    settle: (request: SettleRequest, durability: WriteDurability | undefined) =>
      groups.settle[which(durability)].submit(request),
    complete: (lease: Lease, durability: WriteDurability | undefined) =>
      groups.complete[which(durability)].submit(lease),
  };
}

/** A connection's groups: one per connection, shared by its ledger and its runs. */
const byConnection = new WeakMap<PostgresConnection, ReturnType<typeof leaseWriteGroups>>();

/** The lease-write groups of `c` (made on first use). */
export function leaseWrites(c: PostgresConnection): ReturnType<typeof leaseWriteGroups> {
  let groups = byConnection.get(c);
  if (!groups) {
    groups = leaseWriteGroups(c);
    byConnection.set(c, groups);
  }
  return groups;
}
