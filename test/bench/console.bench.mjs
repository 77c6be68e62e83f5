// Console benchmark: the overview page and an output's page, each an HTTP GET through the real
// console server (hono on @hono/node-server, the page rendered), next to the journal store's own
// `status()` and `outputs.get()` on the same journal (1,000,000 outputs, each with a done run, an
// applied effect and its events), in the same interleaved rounds. The pages add no scan of their
// own: the overview is `status()` plus the last hour's dead letters (by their time index) and the
// chart's minutes (`activity()`, by the time indexes of outputs and applied effects: the whole
// window on a console's first overview, the last minutes after), the output page is the view of
// `idem show` (the output, its runs, ledger rows, events and rejections by job, read at once).
// Usage: node test/bench/console.bench.mjs   (BENCH_BIG outputs; BENCH_QUICK=1: a smoke run)
// Prints one JSON object (see run.mjs). Needs the build (`npm run build`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ACTIVITY_BUCKET_MS, activityStart, activityUntil, startConsole } from "@idem/console";
import { openEffects } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import Database from "better-sqlite3";
import { interleave, median, QUICK, ROUNDS, report, row } from "./lib/measure.mjs";

const BIG = Number(process.env.BENCH_BIG ?? (QUICK ? 50_000 : 1_000_000));
/** Requests per round of the output page (and gets of the store), on jobs spread over the journal. */
const PER = QUICK ? 50 : 300;
/** Overviews (and status() calls) per round. */
const OVERVIEWS = QUICK ? 2 : 3;
const log = (m) => process.stderr.write(`console bench: ${m}\n`);
const jobId = (i) => `hist-${String(i).padStart(8, "0")}`;
const dir = mkdtempSync(join(tmpdir(), "idem-bench-console-"));

/**
 * The journal: `n` outputs of one file.write each, recorded, interpreted (run done, effect
 * applied) and their events, written in big raw transactions on a migrated journal file.
 */
async function fill(path, n) {
  await (await openSqliteJournal(path)).close();
  const db = new Database(path);
  db.pragma("synchronous = OFF");
  const now = Date.now();
  const ins = {
    output: db.prepare(
      "INSERT INTO outputs (job_id, agent, content_hash, body, source, recorded_at) VALUES (?, 'writer', ?, ?, 'bench', ?)",
    ),
    run: db.prepare(
      "INSERT INTO runs (job_id, generation, state, targets, created_at, updated_at) VALUES (?, 1, 'done', '[\"root:out\"]', ?, ?)",
    ),
    effect: db.prepare(
      "INSERT INTO effects (key, generation, job_id, idx, kind, spec_hash, state, detail, attempts, updated_at) VALUES (?, 1, ?, 0, 'file.write', 'h', 'applied', ?, 1, ?)",
    ),
    event: db.prepare(
      "INSERT INTO events (at, job_id, type, data, actor) VALUES (?, ?, ?, ?, 'bench')",
    ),
  };
  const batch = db.transaction((from, to) => {
    for (let i = from; i < to; i++) {
      const id = jobId(i);
      const at = now - (n - i) * 10;
      const body = JSON.stringify({
        jobId: id,
        agent: "writer",
        summary: `output ${i}`,
        effects: [{ kind: "file.write", root: "out", path: `f${i}.txt`, content: `${i}\n` }],
      });
      ins.output.run(id, `h${i}`, body, at);
      ins.run.run(id, at, at);
      ins.effect.run(`${id}/0`, id, JSON.stringify({ sha256: "0".repeat(64), bytes: 8 }), at);
      ins.event.run(at, id, "output.recorded", JSON.stringify({ source: "bench", seq: i + 1 }));
      ins.event.run(at, id, "effect.applied", JSON.stringify({ key: `${id}/0`, generation: 1 }));
      ins.event.run(at, id, "run.done", JSON.stringify({ generation: 1 }));
    }
  });
  const t0 = performance.now();
  for (let i = 0; i < n; i += 50_000) batch(i, Math.min(n, i + 50_000));
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  log(`${n} outputs filled in ${Math.round(performance.now() - t0)} ms`);
}

/** Milliseconds one call of `fn` takes, per call, over `k` calls. */
async function perCall(k, fn) {
  const t0 = performance.now();
  for (let i = 0; i < k; i++) await fn(i);
  return (performance.now() - t0) / k;
}

/**
 * A GET that must answer 200; the body is read whole, as a browser would. A kept-alive connection
 * the server closed while idle (its 5 s keep-alive timeout, outlasted between two overviews) is
 * retried once on a new one, as browsers do for a GET.
 */
async function get(url, retried = false) {
  let r;
  try {
    r = await fetch(url);
  } catch (e) {
    const closed = ["ECONNRESET", "UND_ERR_SOCKET"].includes(e?.cause?.code);
    if (retried || !closed) throw e;
    return get(url, true);
  }
  const text = await r.text();
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${text.slice(0, 200)}`);
  return text.length;
}

try {
  const path = join(dir, "journal.db");
  await fill(path, BIG);
  const parsed = parseConfig(
    { journal: { path }, roots: { out: { path: join(dir, "out") } } },
    { dir, file: join(dir, "idem.config.json") },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const journal = await openSqliteJournal(path);
  const effects = openEffects(config);
  const server = await startConsole({
    config,
    journal,
    effects,
    actor: "bench",
    host: "127.0.0.1",
    port: 0,
  });
  // Jobs spread over the whole journal, the same ones for the page and the store in a round.
  const pick = (round, i) => jobId(((round + 7) * 7919 + i * 104_729) % BIG);
  try {
    const overview = await interleave(
      "overview",
      {
        page: () => perCall(OVERVIEWS, () => get(`${server.url}/`)),
        status: () => perCall(OVERVIEWS, () => journal.status()),
        // The chart's whole window, as a console's first overview reads it.
        window: () =>
          perCall(OVERVIEWS, () => {
            const now = Date.now();
            return journal.activity({
              since: activityStart(now),
              until: activityUntil(now),
              bucketMs: ACTIVITY_BUCKET_MS,
            });
          }),
      },
      { rounds: ROUNDS },
    );
    const output = await interleave(
      "output page",
      {
        page: (r) => perCall(PER, (i) => get(`${server.url}/outputs/${pick(r, i)}`)),
        get: (r) =>
          perCall(PER, async (i) => {
            if (!(await journal.outputs.get(pick(r, i)))) throw new Error("missing output");
          }),
        static: () => perCall(PER, () => get(`${server.url}/assets/console.css`)),
        // What the page cannot do without: the HTTP round trip of this server and the store's read
        // of the same job, one after the other, per request.
        floor: (r) =>
          perCall(PER, async (i) => {
            await get(`${server.url}/assets/console.css`);
            if (!(await journal.outputs.get(pick(r, i)))) throw new Error("missing output");
          }),
      },
      { rounds: ROUNDS },
    );
    report({
      name: "console",
      command: `node test/bench/console.bench.mjs   (BENCH_BIG=${BIG})`,
      results: [
        row({
          metric: `overview page (GET /, HTML) at ${BIG} outputs`,
          unit: "ms",
          idem: overview.page,
          base: overview.status,
          baseline: "the journal store's status() on the same journal, in the same process",
          target: { max: 2 },
        }),
        row({
          metric: `the overview chart's whole window (activity(), ${ACTIVITY_BUCKET_MS / 60_000} min buckets over the last hours) at ${BIG} outputs, as a console's first overview reads it`,
          unit: "ms",
          idem: overview.window,
          base: overview.status,
          baseline: "the journal store's status() on the same journal, in the same process",
          note: `every output and applied effect of this journal is in the window (recorded ${(BIG / 100 / 3600).toFixed(1)} h back at most); later overviews read only the last minutes`,
        }),
        row({
          metric: `an output's page (GET /outputs/<job>, HTML) at ${BIG} outputs, against the HTTP floor plus the store's own read`,
          unit: "ms",
          idem: output.page,
          base: output.floor,
          baseline:
            "per request: GET /assets/console.css through the same server, then the journal store's outputs.get() of the same job",
          target: { max: 2 },
        }),
        row({
          metric: `an output's page (GET /outputs/<job>, HTML) at ${BIG} outputs, against outputs.get() alone`,
          unit: "ms",
          idem: output.page,
          base: output.get,
          baseline: "the journal store's outputs.get() of the same jobs, in the same process",
          note: `the HTTP round trip alone (the static stylesheet through the same server, ${median(output.static).toFixed(3)} ms) is ${(median(output.static) / median(output.get)).toFixed(0)}x get(): no page served over HTTP can come near 2x get()`,
        }),
        row({
          metric: "an output's page against a static file through the same server",
          unit: "ms",
          idem: output.page,
          base: output.static,
          baseline: "GET /assets/console.css (the HTTP floor of this server: no journal read)",
        }),
      ],
      notes: [
        `${ROUNDS} interleaved rounds after a warm-up. Overview: ${OVERVIEWS} GETs, ${OVERVIEWS} status() calls and ${OVERVIEWS} reads of the chart's window per round (mean per call); the console keeps the chart's earlier minutes, so its GETs after the first read only the last ones. Output page: ${PER} GETs of jobs spread over the journal, ${PER} outputs.get() of the same jobs, ${PER} GETs of the stylesheet and ${PER} of both one after the other per round. Journal: ${BIG} outputs with a done run, an applied file.write and three events each, filled in raw transactions.`,
      ],
    });
  } finally {
    await server.close();
    await effects.close();
    await journal.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
