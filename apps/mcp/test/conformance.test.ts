// The MCP project's own conformance suite (@modelcontextprotocol/conformance, `server --url`)
// against `idem mcp --http` (the built CLI), twice: on loopback without a token and bound to no job
// (the case its DNS-rebinding scenario is about), and behind `api.token` bound to a job. Every
// scenario that does not need the reference server's sample tools, prompts or resources passes;
// the others are listed below with the reason, and each is checked to fail for that reason only
// (an unknown sample tool, or a method idem does not serve), so a real failure cannot hide among
// them.
//
// The suite's client sends no Authorization header and takes no option for one, so the run with a
// token goes through a relay that adds `Authorization: Bearer <token>` to each request and passes
// everything else on as it is, as a client holding the token would send it.
//
// Not run over stdio: the suite's server mode takes only `--url` (a Streamable HTTP endpoint);
// it has no way to start a server as a command. idem's stdio server is driven by the SDK's client
// and the Inspector's CLI instead (mcp-server, mcp-stdio and mcp-one-shot tests).
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { startIdem, writeConfig } from "./helpers.js";

const run = promisify(execFile);
const CONFORMANCE = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/conformance/dist/index.js",
);
const HOOKS = join(import.meta.dirname, "conformance/register-node20-hooks.mjs");

/** The scenarios of the suite that apply to idem's server: every check of each must pass. */
const APPLICABLE = [
  "server-initialize",
  "logging-set-level",
  "ping",
  "tools-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
];

/** Skipped behind a token, and why. */
const WITH_TOKEN_SKIPPED: Record<string, string> = {
  "dns-rebinding-protection":
    "checks that a server without authentication refuses a rebound Host; behind api.token idem does not look at Host, the token is what a rebound page lacks (docs/security.md)",
};

const SAMPLE_TOOL = "calls a sample tool of the suite's reference server, which idem does not have";
const NO_PROMPTS = "reads prompts; idem's server offers tools only";
const NO_RESOURCES = "reads resources; idem's server offers tools only";

/** The scenarios that need the reference server's sample tools, prompts or resources: why each. */
const SKIPPED: Record<string, string> = {
  "completion-complete":
    "completes the arguments of a sample prompt or resource template; idem's server has neither",
  "tools-call-simple-text": `${SAMPLE_TOOL} (test_simple_text)`,
  "tools-call-image": `${SAMPLE_TOOL} (test_image_content)`,
  "tools-call-audio": `${SAMPLE_TOOL} (test_audio_content)`,
  "tools-call-embedded-resource": `${SAMPLE_TOOL} (test_embedded_resource)`,
  "tools-call-mixed-content": `${SAMPLE_TOOL} (test_multiple_content_types)`,
  "tools-call-with-logging": `${SAMPLE_TOOL} (test_tool_with_logging)`,
  "tools-call-error": `${SAMPLE_TOOL} (test_error_handling)`,
  "tools-call-with-progress": `${SAMPLE_TOOL} (test_tool_with_progress)`,
  "tools-call-sampling": `${SAMPLE_TOOL} (test_sampling)`,
  "tools-call-elicitation": `${SAMPLE_TOOL} (test_elicitation)`,
  "json-schema-2020-12": `${SAMPLE_TOOL} (json_schema_2020_12_tool)`,
  "elicitation-sep1034-defaults": `${SAMPLE_TOOL} (test_elicitation_sep1034_defaults)`,
  "elicitation-sep1330-enums": `${SAMPLE_TOOL} (test_elicitation_sep1330_enums)`,
  "server-sse-polling": `${SAMPLE_TOOL} (test_reconnection)`,
  "resources-list": NO_RESOURCES,
  "resources-read-text": NO_RESOURCES,
  "resources-read-binary": NO_RESOURCES,
  "resources-templates-read": NO_RESOURCES,
  "resources-subscribe": NO_RESOURCES,
  "resources-unsubscribe": NO_RESOURCES,
  "prompts-list": NO_PROMPTS,
  "prompts-get-simple": NO_PROMPTS,
  "prompts-get-with-args": NO_PROMPTS,
  "prompts-get-embedded-resource": NO_PROMPTS,
  "prompts-get-with-image": NO_PROMPTS,
};

interface Check {
  id: string;
  status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  errorMessage?: string;
}

/** Runs the conformance CLI (on Node 20 through its hooks) and answers its stdout. */
async function conformance(cwd: string, ...args: string[]): Promise<string> {
  const r = await run(process.execPath, ["--import", HOOKS, CONFORMANCE, ...args], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout?: string; stderr?: string; code?: number }) => {
    // Exit 1 when a scenario fails: what failed is read from its checks below.
    if (e.code === 1 && e.stdout !== undefined) return { stdout: e.stdout, stderr: e.stderr };
    throw e;
  });
  return r.stdout;
}

/**
 * A relay on loopback to `target` that adds `Authorization: Bearer <token>` to every request and
 * passes the rest on unchanged, both ways, streams included.
 */
async function tokenRelay(target: string, token: string) {
  const to = new URL(target);
  const server = createServer((req, res) => {
    const up = request(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on("error", () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${to.pathname}${to.search}`,
    [Symbol.asyncDispose]: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Runs the whole suite against `url`: every scenario it lists is applicable or skipped with a
 * reason; each applicable one passes every check, each skipped one fails for its reason only.
 */
async function passesTheSuite(
  cwd: string,
  url: string,
  skipped: Record<string, string>,
): Promise<void> {
  const applicable = APPLICABLE.filter((s) => !(s in skipped));
  const listed = [...(await conformance(cwd, "list", "--server")).matchAll(/^\s+- (\S+)/gm)].map(
    (m) => m[1] as string,
  );
  expect(listed.length).toBeGreaterThan(10);
  expect(listed.filter((s) => !APPLICABLE.includes(s) && !(s in skipped))).toEqual([]);

  const out = join(cwd, `results-${Date.now()}`);
  await conformance(cwd, "server", "--url", url, "--suite", "all", "-o", out);
  const checksOf = (scenario: string): Check[] => {
    const found = readdirSync(out).filter((d) => d.startsWith(`server-${scenario}-2`));
    expect(found, `one result of ${scenario}`).toHaveLength(1);
    return JSON.parse(readFileSync(join(out, found[0] as string, "checks.json"), "utf8"));
  };
  for (const scenario of applicable.filter((s) => listed.includes(s))) {
    const checks = checksOf(scenario);
    const failed = checks.filter((c) => c.status === "FAILURE");
    expect(failed, `${scenario}: ${JSON.stringify(failed)}`).toEqual([]);
    expect(
      checks.some((c) => c.status === "SUCCESS"),
      scenario,
    ).toBe(true);
  }
  for (const scenario of Object.keys(SKIPPED).filter((s) => listed.includes(s))) {
    const failures = checksOf(scenario).filter((c) => c.status === "FAILURE");
    const other = failures.filter(
      (c) => !/Unknown tool|Method not found|not found/.test(c.errorMessage ?? ""),
    );
    expect(other, `${scenario} (${SKIPPED[scenario]}) failed otherwise`).toEqual([]);
  }
  expect(applicable.filter((s) => listed.includes(s))).toHaveLength(applicable.length);
}

describe("the MCP conformance suite against idem mcp --http", () => {
  it("passes every scenario that does not need the reference server's sample tools, prompts or resources: on loopback without a token, bound to no job", async () => {
    await using dir = await tempDir("idem-mcp-conformance-");
    writeConfig(dir.path);
    await using server = startIdem(dir.path, ["mcp", "--http", "--port", "0"]);
    const url = (await server.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    await passesTheSuite(dir.path, url, SKIPPED);
  });

  it("passes them behind api.token, bound to a job (the DNS-rebinding scenario skipped, with its reason)", async () => {
    await using dir = await tempDir("idem-mcp-conformance-token-");
    writeConfig(dir.path, { api: { token: "conformance-token" } });
    await using server = startIdem(dir.path, [
      "mcp",
      "--http",
      "--port",
      "0",
      "--job",
      "conformance-1",
      "--agent",
      "writer",
    ]);
    const url = (await server.waitFor(/idem mcp: (http:\/\/\S+\/mcp)/))[1] as string;
    // Without the token the endpoint answers nothing but 401.
    const bare = await fetch(url, { method: "POST", body: "{}" });
    expect(bare.status).toBe(401);
    await bare.body?.cancel();
    await using relay = await tokenRelay(url, "conformance-token");
    await passesTheSuite(dir.path, relay.url, { ...SKIPPED, ...WITH_TOKEN_SKIPPED });
  });
});
