// What a target answers is hostile: a real `idem interpreter --once` against a local service of the
// test's own that answers 384 MiB to a probe and to a request (read streamed: the process's peak
// memory, its own getrusage maxRSS, stays under 400 MiB), and one that echoes the credential it was
// sent (no byte of it reaches the journal, `idem show` or the interpreter's console and logs).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { buildCli, idem, type Shown } from "./idem-cli.js";

beforeAll(buildCli, 300_000);

const MiB = 1024 * 1024;
const HUGE = 384 * MiB;
const TOKEN = "tok-ECHOED-9f8e7d6c5b4a";
const PRELOAD = pathToFileURL(join(import.meta.dirname, "fixtures/max-rss.mjs")).href;

/** Streams `size` bytes of one reused chunk, minding backpressure; never holds the whole answer. */
function stream(res: ServerResponse, status: number, size: number): void {
  const chunk = Buffer.alloc(MiB, "x");
  res.writeHead(status, { "content-type": "text/plain", "content-length": String(size) });
  res.on("error", () => {});
  let sent = 0;
  const pump = () => {
    while (sent < size && !res.destroyed) {
      sent += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", pump);
    }
    res.end();
  };
  pump();
}

async function startService(): Promise<{ url: string } & AsyncDisposable> {
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path.startsWith("/api/probe/")) return stream(res, 404, HUGE);
    if (path === "/api/huge") return stream(res, 200, HUGE);
    // an echo of the request, as APIs and proxies answer a bad request
    const echo = JSON.stringify({ error: "bad request", headers: req.headers, url: req.url });
    res.writeHead(path === "/api/echo-bad" ? 400 : 200, { "content-type": "application/json" });
    res.end(echo);
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => handle(req, res));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async [Symbol.asyncDispose]() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

const post = (path: string) => ({
  kind: "http.request",
  target: "svc",
  method: "POST",
  path,
  body: { title: "x" },
});

function workspace(url: string, jobs: Record<string, unknown[]>): string {
  const dir = mkdtempSync(join(tmpdir(), "idem-http-answers-"));
  const config = {
    journal: { path: ".idem/journal.db" },
    interpreter: { leaseMs: 60_000, backoffMs: [50, 100], pollMs: 20 },
    http: {
      targets: {
        svc: {
          baseUrl: `${url}/api`,
          probeUrl: "/probe/{key}",
          headersEnv: { Authorization: "SVC_AUTH" },
          timeoutMs: 120_000,
        },
      },
    },
  };
  writeFileSync(join(dir, "idem.config.json"), JSON.stringify(config));
  for (const [jobId, effects] of Object.entries(jobs))
    writeFileSync(join(dir, `${jobId}.json`), JSON.stringify({ jobId, agent: "ops", effects }));
  return dir;
}

describe("http.request's reading of what a target answers", () => {
  it("keeps the interpreter under 400 MiB while the probe and the request answer 384 MiB each", async () => {
    await using svc = await startService();
    const dir = workspace(svc.url, { "huge-1": [post("/huge")] });
    try {
      expect((await idem(dir, ["init", "--journal"])).code).toBe(0);
      expect((await idem(dir, ["submit", "huge-1.json"])).code).toBe(0);
      const rss = join(dir, "max-rss.txt");
      const ran = await idem(dir, ["interpreter", "--once"], {
        SVC_AUTH: `Bearer ${TOKEN}`,
        NODE_OPTIONS: `--import ${PRELOAD}`,
        IDEM_TEST_MAX_RSS: rss,
      });
      expect(ran.code, ran.stderr).toBe(0);
      const shown = JSON.parse((await idem(dir, ["show", "huge-1", "--json"])).stdout) as Shown;
      expect(shown.effects).toMatchObject([{ key: "huge-1/0", state: "applied" }]);
      const peaks = readFileSync(rss, "utf8")
        .trim()
        .split("\n")
        .map((line) => Number(line.split(" ")[1]) / 1024);
      expect(peaks.length).toBeGreaterThan(0);
      expect(Math.max(...peaks)).toBeLessThan(400);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it("keeps no byte of a credential the target echoes back: journal, idem show, console", async () => {
    await using svc = await startService();
    const dir = workspace(svc.url, {
      "echo-ok": [post("/echo-ok")],
      "echo-bad": [post("/echo-bad")],
    });
    try {
      const env = { SVC_AUTH: `Bearer ${TOKEN}` };
      const said: string[] = [];
      const run = async (args: string[]) => {
        const r = await idem(dir, args, env);
        said.push(r.stdout, r.stderr);
        return r;
      };
      expect((await run(["init", "--journal"])).code).toBe(0);
      expect((await run(["submit", "echo-ok.json"])).code).toBe(0);
      expect((await run(["submit", "echo-bad.json"])).code).toBe(0);
      await run(["interpreter", "--once"]);
      await run(["interpreter", "--once", "--json"]);
      const ok = JSON.parse((await run(["show", "echo-ok", "--json"])).stdout) as Shown;
      expect(ok.effects).toMatchObject([{ state: "applied" }]);
      // the echo did reach us, redacted
      expect(JSON.stringify(ok)).toContain('\\"authorization\\":\\"***\\"');
      await run(["show", "echo-bad", "--json"]);
      await run(["show", "echo-bad"]);
      await run(["show", "echo-ok"]);
      for (const text of said) expect(text).not.toContain(TOKEN);
      const store = join(dir, ".idem");
      const files = readdirSync(store, { recursive: true, withFileTypes: true });
      expect(files.map((f) => f.name)).toContain("journal.db");
      for (const f of files.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))) {
        const bytes = readFileSync(f);
        expect(bytes.includes(TOKEN), f).toBe(false);
        expect(bytes.includes(TOKEN.slice(4)), f).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
