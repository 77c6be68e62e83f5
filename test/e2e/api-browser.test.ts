// The executor's API against a hostile web page, as the issue reproduced it (issue 31, finding 1):
// the built CLI's `idem executor` without a token on loopback, and a page on another site that
// posts a form (enctype=text/plain, the JSON split across a field's name and value) to it, in a
// real browser (Debian's chromium through playwright-core, as the console's browser suite). It
// records nothing. And: `idem init` writes a token; an API beyond loopback without one refuses to
// start.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { skipUnless } from "../support/skip.js";

const REPO_ROOT = resolve(import.meta.dirname, "../..");
const IDEM_BIN = join(REPO_ROOT, "apps/cli/bin/idem.js");
const CHROMIUM = process.env.IDEM_CHROMIUM ?? "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
if (!HAVE_CHROMIUM && process.env.IDEM_REQUIRE_CHROMIUM === "1")
  throw new Error(`CI: no chromium at ${CHROMIUM} (.ci/run installs it with apt-get)`);
const PATIENCE_MS = 120_000;
const run = promisify(execFile);

function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  for (const k of ["IDEM_CONFIG", "NATS_URL", "IDEM_FAULT", "IDEM_JOURNAL_URL"]) delete env[k];
  return env;
}

async function idem(cwd: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env: childEnv(),
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** `idem init`, then a writer agent and the token as given (null: none). */
async function workspace(dir: string, token: string | null): Promise<void> {
  const file = join(dir, "idem.config.json");
  if (!existsSync(file)) {
    const init = await idem(dir, "init");
    expect(init.code, init.stderr).toBe(0);
  }
  const config = JSON.parse(readFileSync(file, "utf8")) as { api: Record<string, unknown> };
  writeFileSync(
    file,
    JSON.stringify({
      ...config,
      agents: { writer: { command: [process.execPath, "-e", "process.exit(1)"] } },
      api: { ...config.api, token },
    }),
  );
}

/** `idem executor --port 0` until disposed; its API's URL read from its log. */
async function startExecutor(cwd: string) {
  const child: ChildProcess = spawn(process.execPath, [IDEM_BIN, "executor", "--port", "0"], {
    cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no API URL in the log:\n${log}`)), PATIENCE_MS);
    const look = (d: Buffer) => {
      log += d.toString("utf8");
      const m = /"?url"?\W+(http:\/\/[0-9.]+:\d+)/.exec(log);
      if (m?.[1]) {
        clearTimeout(timer);
        res(m[1]);
      }
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`idem executor exited with ${code}:\n${log}`));
    });
  });
  return {
    url,
    async [Symbol.asyncDispose]() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The outputs `idem status` counts. */
async function outputs(dir: string): Promise<number> {
  const r = await idem(dir, "status", "--json");
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { outputs: number }).outputs;
}

/** A page on another site whose form posts a whole AgentOutput to the API as text/plain. */
function attackerPage(apiUrl: string, jobId: string): string {
  const name = `{"jobId":"${jobId}","agent":"writer","summary":"x`;
  const value = `","effects":[]}`;
  return `<!doctype html><html><body>
<form id="f" method="POST" action="${apiUrl}/v1/outputs" enctype="text/plain">
<input type="hidden" name='${name}' value='${value}'></form>
<script>document.getElementById("f").submit()</script></body></html>`;
}

async function serve(html: string): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  // Another site than the API's 127.0.0.1: the page is served as localhost.
  return { server, url: `http://localhost:${(server.address() as AddressInfo).port}/` };
}

describe("the executor's API against a web page", () => {
  it("records nothing from a form-shaped cross-site POST, sent as a browser sends it", async () => {
    await using dir = await tempDir("idem-api-form-");
    await workspace(dir.path, null);
    await using executor = await startExecutor(dir.path);
    const port = Number(new URL(executor.url).port);
    const form = await new Promise<{ status: number; body: string }>((res, rej) => {
      const body = `{"jobId":"form-1","agent":"writer","summary":"x=","effects":[]}\r\n`;
      const req = request(
        {
          host: "127.0.0.1",
          port,
          method: "POST",
          path: "/v1/outputs",
          headers: {
            "content-type": "text/plain",
            origin: "http://evil.example",
            "sec-fetch-site": "cross-site",
          },
        },
        (r) => {
          let data = "";
          r.on("data", (d: Buffer) => {
            data += d.toString();
          });
          r.on("end", () => res({ status: r.statusCode ?? 0, body: data }));
        },
      );
      req.on("error", rej);
      req.end(body);
    });
    expect(form.status, form.body).toBe(403);
    expect(await outputs(dir.path)).toBe(0);
  });

  it(
    "records nothing when a page on another site submits the form in a real browser",
    skipUnless(HAVE_CHROMIUM, "needs Debian's chromium (apt-get install chromium)"),
    async () => {
      await using dir = await tempDir("idem-api-browser-");
      await workspace(dir.path, null);
      await using executor = await startExecutor(dir.path);
      const page = await serve(attackerPage(executor.url, "browser-1"));
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
      try {
        const tab = await browser.newPage();
        const answered = tab.waitForResponse((r) => r.url().startsWith(`${executor.url}/v1/`), {
          timeout: PATIENCE_MS,
        });
        await tab.goto(page.url);
        const response = await answered;
        // The browser's request reached the API and was refused as cross-site.
        expect(response.status()).toBe(403);
        expect(await response.text()).toContain("cross-site");
      } finally {
        await browser.close();
        await new Promise<void>((r) => page.server.close(() => r()));
      }
      expect(await outputs(dir.path)).toBe(0);
    },
  );

  it("gets a token from idem init, and refuses to serve beyond loopback without one", async () => {
    await using dir = await tempDir("idem-api-token-");
    const init = await idem(dir.path, "init");
    expect(init.code, init.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(dir.path, "idem.config.json"), "utf8")) as {
      api: { token: unknown };
    };
    expect(config.api.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await workspace(dir.path, null);
    const r = await idem(dir.path, "executor", "--host", "0.0.0.0", "--port", "0");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("api.token");
    expect(r.stderr).toContain("--host");
  });
});
