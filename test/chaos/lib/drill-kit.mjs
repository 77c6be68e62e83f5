// What the multi-host drills share (hosts-drill.mjs, cluster-drill.mjs): a seeded PRNG, the
// HTTP target that counts deliveries, the agents' run logs read back, and the report.
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";

/** mulberry32: a small seeded PRNG, so a seed replays the schedule. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * The drill agent's source: logs each run (job, pid, time, agent) to the run log named on its
 * command line and answers a random nonce in every effect, so a second run of a job would be seen
 * as different content. `effects(job, nonce)` is written into it as source text.
 */
export function agentScript(effectsSource) {
  return `// A drill agent: logs each run on its host and answers non-deterministically.
import { appendFileSync, readFileSync } from "node:fs";
const [name, runsLog] = process.argv.slice(2);
const job = JSON.parse(readFileSync(0, "utf8"));
appendFileSync(runsLog, job.jobId + " " + process.pid + " " + Date.now() + " " + name + "\\n");
const nonce = Math.random().toString(36).slice(2);
await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 15)));
const effects = (${effectsSource})(job, nonce);
process.stdout.write(JSON.stringify({ summary: name + " did " + job.jobId, effects }));
`;
}

/**
 * The HTTP target: counts every complete request by Idempotency-Key; GET /probe/<key> answers 200
 * or 404. Listens on `host` (127.0.0.1, or a drill network's bridge).
 */
export function startReceiver(host = "127.0.0.1") {
  const deliveries = new Map(); // key -> [{ path, body }]
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const url = new URL(req.url, "http://x");
      if (req.method === "GET" && url.pathname.startsWith("/probe/")) {
        const key = decodeURIComponent(url.pathname.slice("/probe/".length));
        res.writeHead(deliveries.has(key) ? 200 : 404).end();
        return;
      }
      const key = req.headers["idempotency-key"];
      if (req.method !== "POST" || typeof key !== "string") {
        res.writeHead(400).end();
        return;
      }
      const list = deliveries.get(key) ?? [];
      list.push({ path: url.pathname, body });
      deliveries.set(key, list);
      res.writeHead(201, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  return new Promise((resolve) => {
    server.listen(0, host, () => resolve({ server, deliveries, port: server.address().port }));
  });
}

/**
 * Reads each host's run log back: runs per job, runs per host, and every run that started after
 * its job's output was recorded (`outputs`: jobId -> record with `recordedAt`).
 */
export function readAgentRuns(hosts, outputs) {
  const runs = new Map();
  const lateRuns = [];
  const runsByHost = {};
  for (const host of hosts) {
    const lines = existsSync(host.runsLog)
      ? readFileSync(host.runsLog, "utf8").split("\n").filter(Boolean)
      : [];
    runsByHost[host.name] = lines.length;
    for (const line of lines) {
      const [id, pid, at] = line.split(" ");
      runs.set(id, (runs.get(id) ?? 0) + 1);
      const o = outputs.get(id);
      if (o && Number(at) > o.recordedAt)
        lateRuns.push(`${id} (pid ${pid} at ${at}, recorded ${o.recordedAt})`);
    }
  }
  return { runs, lateRuns, runsByHost };
}

/** Prints the drill's table (or JSON with `json`), the violations last. */
export function printReport({ title, seed, table, violations, json }) {
  if (json) {
    process.stdout.write(`${JSON.stringify({ seed, table, violations }, null, 2)}\n`);
    return;
  }
  const w = Math.max(...table.map((r) => r.name.length));
  process.stdout.write(`\n${title}, seed ${seed}\n`);
  for (const r of table)
    process.stdout.write(
      `  ${r.name.padEnd(w)}  ${String(r.value).padStart(14)}  ${r.ok ? "ok" : "VIOLATION"}\n`,
    );
  process.stdout.write(
    violations.length
      ? `\n${violations.length} violation(s):\n  ${violations.join("\n  ")}\n`
      : "\nno violations\n",
  );
}
