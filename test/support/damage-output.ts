// Damages a recorded output row as a disk or a hand edit would (docs/runbook.md, "A damaged
// output"): the immutability trigger is stepped around for this one update, as someone editing the
// journal by hand would, and put back, so the journal is otherwise as idem left it.
import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import pg from "pg";

/** Where the journal is: a SQLite file or a PostgreSQL URL. */
export type DamageLocation = { path: string } | { url: string };

/**
 * Writes `body` as the recorded body of `jobId`'s output. `hash`: `matching` (the default) also
 * rewrites the content hash to the new body's, as a careful hand edit would, so only the shape
 * tells the damage; `kept` leaves the recorded hash, as a damaged byte on disk does.
 */
export async function damageOutputRow(
  at: DamageLocation,
  jobId: string,
  body: string,
  hash: "matching" | "kept" = "matching",
): Promise<void> {
  const newHash = createHash("sha256").update(body).digest("hex");
  if ("path" in at) {
    const db = new Database(at.path, { timeout: 10_000 });
    try {
      const trigger = db
        .prepare(
          "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'outputs_no_update'",
        )
        .get() as { sql: string };
      db.transaction(() => {
        db.exec("DROP TRIGGER outputs_no_update");
        const set = hash === "kept" ? "body = ?" : "body = ?, content_hash = ?";
        const args = hash === "kept" ? [body, jobId] : [body, newHash, jobId];
        const changed = db.prepare(`UPDATE outputs SET ${set} WHERE job_id = ?`).run(...args);
        if (changed.changes !== 1) throw new Error(`no output row for ${jobId}`);
        db.exec(trigger.sql);
      })();
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: at.url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await client.query("ALTER TABLE outputs DISABLE TRIGGER outputs_no_update");
    const r =
      hash === "kept"
        ? await client.query("UPDATE outputs SET body = $1 WHERE job_id = $2", [body, jobId])
        : await client.query("UPDATE outputs SET body = $1, content_hash = $2 WHERE job_id = $3", [
            body,
            newHash,
            jobId,
          ]);
    if (r.rowCount !== 1) throw new Error(`no output row for ${jobId}`);
    await client.query("ALTER TABLE outputs ENABLE TRIGGER outputs_no_update");
    await client.query("COMMIT");
  } finally {
    await client.end();
  }
}

/** The damages issue 42 names, each as the body a row is left with. */
export const DAMAGES = {
  /** Cut mid-way (a torn write, a truncated copy). */
  cut: (body: string) => body.slice(0, Math.floor(body.length / 2)),
  null: () => "null",
  nullEffect: (body: string) => {
    const o = JSON.parse(body) as { effects: unknown[] };
    return JSON.stringify({ ...o, effects: [null] });
  },
  /** A spec without its fields: only its kind is left. */
  bareSpec: (body: string) => {
    const o = JSON.parse(body) as { effects: { kind: string }[] };
    return JSON.stringify({ ...o, effects: o.effects.map((e) => ({ kind: e.kind })) });
  },
} as const;
