import { execFile, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { openSqliteJournal } from "@idem/journal";
import { freePort, startNatsServer, tempDir } from "@idem/testing";
import { connect } from "@nats-io/transport-node";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { submission, submissionText } from "./hostile.js";

const IDEM = join(import.meta.dirname, "../../apps/cli/bin/idem.js");

interface Answer {
  status: string;
  issues?: { path: string; message: string }[];
}

/** One POST on its own connection (no keep-alive), so a refused body cannot break the next request. */
function post(port: number, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/v1/outputs",
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json" },
      },
      (res) => {
        let data = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => {
          data += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** `idem submit - --json`: one answer, or an array of them for a batch (a JSON array or JSON Lines). */
function cliSubmit(
  config: string,
  text: string,
): Promise<{ code: number | null; answer: Answer | Answer[] }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [IDEM, "submit", "-", "--json", "--config", config],
      { encoding: "utf8" },
      (err, stdout) => {
        try {
          resolve({
            code: err ? ((err as { code?: number }).code ?? 1) : 0,
            answer: JSON.parse(stdout) as Answer | Answer[],
          });
        } catch (e) {
          reject(
            new Error(
              `idem submit printed no JSON for ${text.slice(0, 200)}: ${String(e)}; stdout: ${stdout.slice(0, 200)}`,
            ),
          );
        }
      },
    );
    child.stdin?.end(text);
  });
}

describe("fuzzing the real surfaces: HTTP API, NATS submit subject and the CLI", () => {
  it("answers hostile outputs on every surface with the field named, and records nothing for them", async () => {
    await using dir = await tempDir("idem-fuzz-surfaces-");
    await using nats = await startNatsServer();
    const port = await freePort();
    const configFile = join(dir.path, "idem.config.json");
    writeFileSync(
      configFile,
      JSON.stringify({
        repos: { site: { path: "site" } },
        roots: { outbox: { path: "outbox" } },
        publish: { events: { subjectPrefix: "events", stream: "EVENTS" } },
        http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9" } } },
        limits: { maxOutputBytes: 262_144, maxFileBytes: 65_536 },
        agents: {
          writer: { command: [process.execPath, "-e", "process.exit(1)"], timeoutMs: 5000 },
        },
        nats: { url: nats.url },
        api: { port, maxBodyBytes: 262_144 },
      }),
    );
    const executor = spawn(process.execPath, [IDEM, "executor", "--config", configFile], {
      stdio: "ignore",
    });
    const nc = await connect({ servers: nats.url });
    const journal = await openSqliteJournal(join(dir.path, ".idem/journal.db"));
    try {
      // The executor is up once its API answers: however long a busy machine takes to start it.
      const up = Date.now() + 60_000;
      while (
        !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        if (Date.now() > up) throw new Error("timed out waiting for the executor's /healthz");
        await new Promise((r) => setTimeout(r, 100));
      }
      const counts = () =>
        journal.database
          .prepare(
            "SELECT (SELECT COUNT(*) FROM outputs) o, (SELECT COUNT(*) FROM runs) r, (SELECT COUNT(*) FROM rejections) j",
          )
          .get() as { o: number; r: number; j: number };
      const samples = fc.sample(submission, { numRuns: 300, seed: 2026 });
      let recorded = 0;
      const surfaces = { http: 0, nats: 0, cli: 0 };
      for (const [n, s] of samples.entries()) {
        const text = submissionText(s, `surface-${n}`);
        if (text === undefined) continue;
        const before = counts();
        let answers: Answer[];
        let surface: keyof typeof surfaces;
        if (n < 150) {
          surface = "http";
          const oversize = Buffer.byteLength(text) > 262_144;
          const res = await post(port, text).catch((e: unknown) => {
            // Over api.maxBodyBytes the server answers 413 and closes before reading the rest, so a
            // client still writing may see the socket close instead: refused either way.
            if (!oversize) throw e;
            return undefined;
          });
          if (res === undefined || res.status === 413) {
            expect(oversize).toBe(true);
            answers = [
              {
                status: "invalid",
                issues: [{ path: "", message: "413: larger than api.maxBodyBytes" }],
              },
            ];
          } else {
            const answer = JSON.parse(res.body) as Answer;
            answers = [answer];
            expect(res.status).toBe(
              { recorded: 201, duplicate: 200, conflict: 409, invalid: 400 }[answer.status],
            );
          }
        } else if (n < 270) {
          surface = "nats";
          const reply = await nc.request("idem.submit", text, { timeout: 60_000 });
          answers = [reply.json<Answer>()];
        } else {
          surface = "cli";
          const r = await cliSubmit(configFile, text);
          // A JSON array is a batch for idem submit: one answer per output, all refused or none.
          answers = Array.isArray(r.answer) ? r.answer : [r.answer];
          const ok = answers.every((a) => a.status === "recorded" || a.status === "duplicate");
          expect(r.code).toBe(ok ? 0 : 1);
          if (answers.length === 0) expect(counts()).toEqual(before);
        }
        surfaces[surface] += 1;
        for (const answer of answers) {
          expect(
            ["recorded", "duplicate", "invalid"],
            `${surface} ${s.p}: ${JSON.stringify(answer)}`,
          ).toContain(answer.status);
          if (answer.status === "invalid") {
            expect(answer.issues?.length).toBeGreaterThan(0);
            for (const i of answer.issues ?? []) expect(i.message.length).toBeGreaterThan(0);
            expect(counts()).toEqual(before);
          } else if (answer.status === "recorded") recorded += 1;
        }
      }
      expect(surfaces.http + surfaces.nats + surfaces.cli).toBeGreaterThan(280);
      expect(counts().o).toBe(recorded);
      expect(await journal.maintenance.integrity()).toEqual([]);
    } finally {
      await journal.close();
      await nc.close();
      executor.kill("SIGTERM");
      await new Promise((r) => executor.once("exit", r));
    }
    // 30 CLI processes and 270 requests: minutes on a busy machine, so a bound above the default.
  }, 600_000);
});
