// Concurrency benchmark: how many agents the embedded default (SQLite journal, no NATS) should run
// at once. The agent is a real process that waits like an agent waiting on a model (WAIT_MS, 1 s)
// and prints a small output. For each `queue.maxAckPending` in LEVELS, jobs/s through enqueue ->
// executor -> agent process -> record, next to the same agent command run that many at a time by
// a plain loop (spawn, write the job, read the output; no engine) in the same rounds. The default
// (docs/configuration.md) is chosen from this table: the smallest level that keeps the machine
// near the plain loop while most of the time is spent waiting. Prints one JSON object (see run.mjs).
import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enqueueJob } from "@idem/core";
import { createExecutor } from "@idem/executor";
import { openSqliteJournal } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { parseConfig } from "@idem/schema";
import { interleave, QUICK, ROUNDS, report, row } from "./lib/measure.mjs";

/** docs/configuration.md's default for `queue.maxAckPending`, read from a parsed empty config. */
const DEFAULT = parseConfig({}, { dir: tmpdir() }).config?.queue.maxAckPending;

const WAIT_MS = Number(process.env.BENCH_WAIT_MS ?? (QUICK ? 200 : 1000));
const LEVELS = (process.env.BENCH_LEVELS ?? (QUICK ? "1,4" : "1,4,16,64")).split(",").map(Number);
/** Jobs per level: enough waits in a row that starting and draining are a small part of a round. */
const WAVES = Number(process.env.BENCH_WAVES ?? (QUICK ? 2 : 6));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), "idem-bench-conc-"));
const agentPath = join(dir, "agent.sh");
writeFileSync(
  agentPath,
  `#!/bin/sh\ncat >/dev/null\nsleep ${WAIT_MS / 1000}\nprintf '{"summary":"ok","effects":[]}'\n`,
);
chmodSync(agentPath, 0o755);

/** The plain loop: `n` runs of the agent command, `k` at a time. */
async function plain(n, k) {
  let next = 0;
  const t0 = performance.now();
  const once = (i) =>
    new Promise((resolve, reject) => {
      const p = spawn(agentPath, [], { stdio: ["pipe", "pipe", "inherit"] });
      let out = "";
      p.stdout.on("data", (d) => {
        out += d;
      });
      p.on("error", reject);
      p.on("close", (code) => (code === 0 && out ? resolve() : reject(new Error(`exit ${code}`))));
      p.stdin.end(JSON.stringify({ jobId: `plain-${i}`, agent: "writer", input: {} }));
    });
  await Promise.all(
    Array.from({ length: k }, async () => {
      while (next < n) await once(next++);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** The embedded executor with `queue.maxAckPending: k` on a fresh SQLite journal. */
async function idem(n, k, tag) {
  const path = join(dir, `journal-${tag}.db`);
  const r = parseConfig(
    {
      journal: { path },
      agents: { writer: { command: [agentPath], timeoutMs: 600_000 } },
      queue: { maxAckPending: k, ackWaitMs: 600_000 },
    },
    { dir },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  const journal = await openSqliteJournal(path);
  for (let i = 0; i < n; i++) {
    await enqueueJob({ jobId: `${tag}-${i}`, agent: "writer", input: {} }, { journal });
  }
  const ex = createExecutor({ config: r.config, journal, logger: silentLogger() });
  const t0 = performance.now();
  await ex.start();
  while ((await journal.status()).outputs < n) await sleep(20);
  const rate = n / ((performance.now() - t0) / 1000);
  await ex.stop();
  await journal.close();
  return rate;
}

const results = [];
try {
  for (const k of LEVELS) {
    const n = k * WAVES;
    const got = await interleave(`concurrency ${k}`, {
      idem: (r) => idem(n, k, `k${k}r${r + 1}`),
      plain: () => plain(n, k),
    });
    results.push(
      row({
        metric: `jobs/s, embedded executor, queue.maxAckPending ${k}${k === DEFAULT ? " (the default)" : ""}, agent waits ${WAIT_MS} ms`,
        unit: "jobs/s",
        idem: got.idem,
        base: got.plain,
        baseline: `the same agent command, ${k} at a time, in a plain loop (no engine)`,
      }),
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

report({
  name: "concurrency",
  command: "node test/bench/concurrency.bench.mjs",
  results,
  notes: [
    `${ROUNDS} interleaved rounds per level after an uncounted warm-up round, ${WAVES} jobs per slot at each level (maxAckPending x ${WAVES} jobs), a fresh SQLite journal (the embedded default, synchronous=FULL) per round. The agent is a shell script that reads the job, sleeps ${WAIT_MS} ms (an agent waiting on its model) and prints an output with no effects: an ideal executor reaches maxAckPending / ${WAIT_MS / 1000} s jobs/s. The default queue.maxAckPending is chosen from this table (docs/configuration.md).`,
  ],
});
