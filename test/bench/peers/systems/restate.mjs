// Restate's side of the peers bench: restate-server (the binary of @restatedev/restate-server, run
// directly) with its data in this run's folder on free loopback ports, and the service deployment
// (restate-service.mjs) supervised like idem's processes and registered over the admin API; the
// jobs sent over the ingress (`POST /jobs/run` with `idempotency-key: <job ID>`, N calls open at
// once), the final state read with the SQL introspection API (sys_invocation).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@idem/testing";
import { lineWaiter, start, stop, waitFor } from "../lib/procs.mjs";
import { GIT_ENV, seedRepo } from "../lib/workload.mjs";
import { supervised } from "./supervised.mjs";

const here = fileURLToPath(new URL(".", import.meta.url));
export const RESTATE_BIN = join(
  here,
  "../node_modules/@restatedev/restate-server-linux-x64/bin/restate-server",
);

/**
 * The server's config: defaults but for its ports, data folder, log level and telemetry. Its
 * `worker.invoker.concurrent-invocations-limit` does not bound the handlers in flight to N: it holds
 * per partition (24 by default), and with it at 32 the bench saw ~490 of 500 handlers running at
 * once; the client bounds them instead (submit).
 */
function serverConfig(dir, ports, invoker) {
  const tuned = invoker
    ? `default-num-partitions = ${invoker.partitions}\n\n[worker.invoker]\nconcurrent-invocations-limit = ${invoker.limit}\n\n`
    : "";
  return `cluster-name = "peers-bench"
base-dir = "${join(dir, "restate-data")}"
disable-telemetry = true
log-filter = "warn"
bind-address = "127.0.0.1:${ports.fabric}"
advertised-address = "http://127.0.0.1:${ports.fabric}/"
${tuned}
[ingress]
bind-address = "127.0.0.1:${ports.ingress}"

[admin]
bind-address = "127.0.0.1:${ports.admin}"
`;
}

/**
 * @param {object} o
 * @param {string} o.dir this run's folder
 * @param {"git" | "isomorphic-git"} o.commit
 * @param {number} o.concurrency ingress calls open at once
 * @param {string} o.logFile
 * @param {() => number} o.random
 * @param {{ partitions: number, limit: number }} [o.invoker] the server bounds the invocations
 *   instead of the client: `default-num-partitions` and `worker.invoker.concurrent-invocations-limit`
 *   (https://docs.restate.dev/references/server_config), every call sent at once
 */
export function restateSystem({ dir, commit, concurrency, logFile, random, invoker }) {
  const repo = join(dir, "repo");
  let server;
  let ports;
  let inflightMax = 0;
  let callErrors = 0;
  const post = (url, body, headers = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const query = async (sql) => {
    const r = await post(
      `http://127.0.0.1:${ports.admin}/query`,
      { query: sql },
      {
        accept: "application/json",
      },
    );
    if (!r.ok) throw new Error(`restate query: ${r.status} ${await r.text()}`);
    return (await r.json()).rows;
  };
  const service = supervised("restate-service", random, async () => {
    const lines = lineWaiter();
    const env = {
      ...process.env,
      ...GIT_ENV,
      PEERS_PORT: String(ports.service),
      PEERS_REPO: repo,
      PEERS_COMMIT: commit,
    };
    const argv = [
      process.execPath,
      "--import",
      join(here, "with-resolvers.mjs"),
      join(here, "restate-service.mjs"),
    ];
    const child = start("restate-service", argv, {
      cwd: dir,
      env,
      logFile,
      onLine: (l) => {
        const m = /^inflight-max (\d+)/.exec(l);
        if (m) inflightMax = Math.max(inflightMax, Number(m[1]));
        lines.onLine(l);
      },
    });
    await lines.wait((l) => l.startsWith("ready"), child, "Restate service ready", 60_000);
    return child;
  });
  return {
    repo,
    label: `Restate, ${commit === "git" ? "git command" : "isomorphic-git"}${invoker ? `, ${invoker.partitions} partition, invoker limit ${invoker.limit}` : ""}`,
    async start() {
      seedRepo(repo);
      ports = {
        ingress: await freePort(),
        admin: await freePort(),
        fabric: await freePort(),
        service: await freePort(),
      };
      const configFile = join(dir, "restate.toml");
      writeFileSync(configFile, serverConfig(dir, ports, invoker));
      server = start(
        "restate-server",
        [RESTATE_BIN, "--config-file", configFile, "--listen-mode", "tcp", "--no-logo"],
        { cwd: dir, env: { ...process.env, NO_COLOR: "1" }, logFile },
      );
      await service.start();
      const ok = (url) => async () => (await fetch(url)).ok;
      await waitFor("restate admin", ok(`http://127.0.0.1:${ports.admin}/health`), {
        timeoutMs: 120_000,
        everyMs: 200,
      });
      const r = await post(`http://127.0.0.1:${ports.admin}/deployments`, {
        uri: `http://127.0.0.1:${ports.service}`,
      });
      if (!r.ok) throw new Error(`registering the deployment: ${r.status} ${await r.text()}`);
      await waitFor("restate ingress", ok(`http://127.0.0.1:${ports.ingress}/restate/health`), {
        timeoutMs: 120_000,
        everyMs: 200,
      });
    },
    /**
     * The jobs sent over the ingress as request-response calls, each with its job ID as
     * idempotency key, `concurrency` calls open at once (the next one sent when one answers).
     * A call that fails (an invocation that ends in failure, a connection reset) is counted and
     * its slot moves on: the state and the repository tell what became of the job.
     */
    async submit(ids) {
      let next = 0;
      const lane = async () => {
        while (next < ids.length) {
          const id = ids[next++];
          try {
            const r = await post(`http://127.0.0.1:${ports.ingress}/jobs/run`, id, {
              "idempotency-key": id,
            });
            await r.arrayBuffer();
            if (!r.ok) callErrors += 1;
          } catch {
            callErrors += 1;
          }
        }
      };
      const open = invoker ? ids.length : Math.min(concurrency, ids.length);
      await Promise.all(Array.from({ length: open }, lane));
    },
    killOne: () => service.kill(),
    /** Invocations completed (with success or failure) out of `n`, the rest by status. */
    async state(n) {
      const rows = await query(
        "SELECT status, completion_result, count(*) AS n FROM sys_invocation GROUP BY status, completion_result",
      );
      const by = {};
      let settled = 0;
      let failed = 0;
      for (const r of rows) {
        const key = r.status === "completed" ? `completed ${r.completion_result}` : r.status;
        by[key] = (by[key] ?? 0) + Number(r.n);
        if (r.status === "completed") settled += Number(r.n);
        if (r.status === "completed" && r.completion_result !== "success") failed += Number(r.n);
      }
      const errors = await query(
        "SELECT DISTINCT last_failure FROM sys_invocation WHERE status <> 'completed' AND last_failure IS NOT NULL LIMIT 3",
      ).catch(() => []);
      const errs = errors.map((e) => String(e.last_failure).split("\n")[0].slice(0, 160));
      return {
        settled: Math.min(settled, n),
        failed,
        detail: `invocations ${JSON.stringify(by)}${callErrors ? `, ingress calls failed: ${callErrors}` : ""}${errs.length ? `; last failures: ${errs.join(" | ")}` : ""}`,
      };
    },
    inflightMax: () => inflightMax,
    restarts: () => service.restarts(),
    /** restate-server and the service deployment. */
    cpuRoots: () => [server?.pid, service.pid()],
    async stop() {
      await service.stop();
      if (server) await stop(server, 10_000);
    },
  };
}
