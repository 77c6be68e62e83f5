// Console benchmark: the overview page and an output's page, each an HTTP GET through the real
// console server (hono on @hono/node-server, the page rendered), next to the journal store's own
// `status()` and `outputs.get()` on the same journal (1,000,000 outputs, each with a done run, an
// applied effect and its events), in the same interleaved rounds. The pages add no scan of their
// own: the overview is `status()` plus the last hour's dead letters (by their time index), the
// output page is `showJob` (the output, its runs, ledger rows, events and rejections by job).
// Usage: node test/bench/console.bench.mjs   (BENCH_BIG outputs; BENCH_QUICK=1: a smoke run)
// Prints one JSON object (see run.mjs). Needs the build (`npm run build`).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startConsole } from "@idem/console";
import { openTargets } from "@idem/core";
import { openJournal } from "@idem/journal";
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
  await (await openJournal(path)).close();
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
  const journal = await openJournal(path);
  const effects = openTargets(config);
  const server = await startConsole({
    config,
    journal,
    effects,
    actor: "bench",
    host: "127.0.0.1",
    port: 0,
    sampleMs: 0,
  });
  // Jobs spread over the whole journal, the same ones for the page and the store in a round.
  const pick = (round, i) => jobId(((round + 7) * 7919 + i * 104_729) % BIG);
  try {
    const overview = await interleave(
      "overview",
      {
        page: () => perCall(OVERVIEWS, () => get(`${server.url}/`)),
        status: () => perCall(OVERVIEWS, () => journal.status()),
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
          metric: `an output's page (GET /outputs/<job>, HTML) at ${BIG} outputs`,
          unit: "ms",
          idem: output.page,
          base: output.get,
          baseline: "the journal store's outputs.get() of the same jobs, in the same process",
          target: { max: 2 },
          note: `an HTTP round trip of the static stylesheet through the same server takes ${median(output.static).toFixed(3)} ms (median of rounds): most of the page's time is HTTP, not the journal`,
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
        `${ROUNDS} interleaved rounds after a warm-up. Overview: ${OVERVIEWS} GETs and ${OVERVIEWS} status() calls per round (mean per call). Output page: ${PER} GETs of jobs spread over the journal and ${PER} outputs.get() of the same jobs per round. Journal: ${BIG} outputs with a done run, an applied file.write and three events each, filled in raw transactions.`,
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
