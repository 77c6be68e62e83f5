// `idem doctor` asks every kind for what it needs outside the config (issue 50): the credentials'
// variables (GitHub, Slack, sql.exec, http.request, the agents' own, a kind of the operator's own
// through the kit), and with --network whether the target answers and who the token is. The real
// built CLI against the GitHub and Slack stand-ins.
import { symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, startGitHubStandIn, startSlackStandIn } from "@idem/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

interface Report {
  ok: boolean;
  checked: string[];
  findings: { severity: string; key: string; finding: string; fix: string }[];
}

let ws: Workspace;
beforeEach(() => {
  ws = workspace({});
});
afterEach(() => ws.remove());

/** Every variable this test names, unset in the child unless given. */
const UNSET = ["GH_TOKEN_T", "SLACK_TOKEN_T", "ORDERS_URL_T", "TICKETS_AUTH_T", "WRITER_TOKEN_T"];
const env = (set: Record<string, string> = {}) =>
  Object.fromEntries(UNSET.map((v) => [v, set[v] ?? ""]));

async function doctor(args: string[], set: Record<string, string> = {}) {
  const r = await idem(["doctor", "--json", "--config", ws.config, ...args], { env: env(set) });
  return { code: r.code, report: JSON.parse(r.stdout || "{}") as Report, stderr: r.stderr };
}

const github = (baseUrl: string) => ({
  baseUrl,
  tokenEnv: "GH_TOKEN_T",
  repos: { app: { owner: "acme", name: "app" } },
});
const slack = (baseUrl: string) => ({
  baseUrl,
  tokenEnv: "SLACK_TOKEN_T",
  channels: { ops: "C0123ABCD" },
});

describe("idem doctor asks every kind for its credentials", () => {
  it("names each unset variable as a violation, without --network (exit 3)", async () => {
    ws.writeConfig({
      api: { token: "operator-token-0123456789" },
      github: github("https://api.github.com"),
      slack: slack("https://slack.com"),
      sql: {
        targets: {
          orders: {
            dialect: "postgres",
            urlEnv: "ORDERS_URL_T",
            statements: { add: { sql: "SELECT 1", params: [] } },
          },
        },
      },
      http: {
        targets: {
          tickets: {
            baseUrl: "https://tickets.example.com",
            headersEnv: { Authorization: "TICKETS_AUTH_T" },
            idempotencyKeys: true,
          },
        },
      },
      credentials: { writer: { tokenEnv: "WRITER_TOKEN_T", effects: {} } },
    });
    const { code, report, stderr } = await doctor([]);
    expect(code, stderr).toBe(3);
    const violation = (key: string) =>
      report.findings.find((f) => f.key === key && f.severity === "violation");
    expect(violation("github.tokenEnv")?.finding).toContain("GH_TOKEN_T");
    expect(violation("slack.tokenEnv")?.finding).toContain("SLACK_TOKEN_T");
    expect(violation("sql.targets.orders.urlEnv")?.finding).toContain("ORDERS_URL_T");
    expect(violation("http.targets.tickets.headersEnv.Authorization")?.finding).toContain(
      "TICKETS_AUTH_T",
    );
    expect(violation("credentials.writer.tokenEnv")?.finding).toContain("WRITER_TOKEN_T");
    // Without --network nothing is contacted: no reachability finding.
    expect(report.findings.some((f) => f.key.endsWith("baseUrl"))).toBe(false);
  });

  it("--network: exits 3 naming the GitHub token variable and the base URL that does not answer", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    ws.writeConfig({ github: github(url), slack: slack(url) });
    const { code, report, stderr } = await doctor(["--network", "--timeout", "3000"]);
    expect(code, stderr).toBe(3);
    const byKey = new Map(report.findings.map((f) => [f.key, f]));
    expect(byKey.get("github.tokenEnv")?.finding).toContain("GH_TOKEN_T");
    expect(byKey.get("github.baseUrl")?.finding).toContain(`${url}/rate_limit is not reachable`);
    expect(byKey.get("slack.tokenEnv")?.finding).toContain("SLACK_TOKEN_T");
    expect(byKey.get("slack.baseUrl")?.finding).toContain(`127.0.0.1:${port}`);
    // The table names them too.
    const table = await idem(["doctor", "--network", "--config", ws.config], { env: env() });
    expect(table.code).toBe(3);
    expect(table.stdout).toContain("GH_TOKEN_T");
    expect(table.stdout).toContain(`127.0.0.1:${port}`);
  });

  it("--network with the tokens set: says who each token acts as (the stand-ins' GET /user, auth.test)", async () => {
    await using gh = await startGitHubStandIn();
    gh.createRepo({ owner: "acme", name: "app" });
    await using sl = await startSlackStandIn();
    const channel = sl.createChannel({ name: "ops" });
    ws.writeConfig({
      github: github(gh.url),
      slack: { ...slack(sl.url), channels: { ops: channel } },
    });
    const set = { GH_TOKEN_T: gh.token, SLACK_TOKEN_T: sl.token };
    const { code, report, stderr } = await doctor(["--network"], set);
    expect(code, JSON.stringify(report.findings) + stderr).toBe(0);
    expect(report.checked).toContain(`github as ${gh.login}`);
    expect(report.checked.some((c) => c.startsWith("slack as "))).toBe(true);
    const json = JSON.stringify(report);
    expect(json).not.toContain(gh.token);
    expect(json).not.toContain(sl.token);
    const table = await idem(["doctor", "--network", "--config", ws.config], { env: env(set) });
    expect(table.stdout).toContain(`github as ${gh.login}`);
    gh.assertNoViolations();
    sl.assertNoViolations();
  });

  it("asks a kind of the operator's own, through the kit: its missing variable is a violation", async () => {
    symlinkSync(join(REPO_ROOT, "node_modules"), join(ws.dir, "node_modules"), "dir");
    writeFileSync(
      join(ws.dir, "acme-page.mjs"),
      `import { absent, defineEffectKind, missingCredential, unreachable } from "@idem/kit";
import { z } from "zod";
export default defineEffectKind({
  name: "acme.page",
  description: "Pages someone.",
  guarantee: "exactly-once-in-effect",
  spec: z.strictObject({ kind: z.literal("acme.page"), text: z.string() }),
  options: z.strictObject({ url: z.string(), tokenEnv: z.string() }),
  targets: () => ["pager"],
  async doctor(ctx) {
    const found = [];
    const m = missingCredential(ctx, ctx.options.tokenEnv, "kinds.acme.page.options.tokenEnv", "the pager's token");
    if (m) found.push(m);
    if (ctx.network) {
      const u = await unreachable(ctx, ctx.options.url, "kinds.acme.page.options.url");
      if (u) found.push(u);
    }
    return found;
  },
  probe: async () => absent(),
  apply: async () => ({}),
});
`,
    );
    const port = await freePort();
    ws.writeConfig({
      kinds: {
        "acme.page": {
          module: "./acme-page.mjs",
          options: { url: `http://127.0.0.1:${port}/`, tokenEnv: "PAGER_TOKEN_T" },
        },
      },
    });
    const r = await idem(["doctor", "--json", "--network", "--config", ws.config], {
      env: { PAGER_TOKEN_T: "" },
    });
    expect(r.code, r.stderr).toBe(3);
    const found = (JSON.parse(r.stdout) as Report).findings;
    expect(found.find((f) => f.key === "kinds.acme.page.options.tokenEnv")?.finding).toContain(
      "PAGER_TOKEN_T",
    );
    expect(found.find((f) => f.key === "kinds.acme.page.options.url")?.finding).toContain(
      `127.0.0.1:${port}`,
    );
    const ok = await idem(["doctor", "--json", "--config", ws.config], {
      env: { PAGER_TOKEN_T: "set" },
    });
    expect(ok.code, ok.stdout).toBe(0);
  });
});
