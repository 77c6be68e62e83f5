// The GitHub stand-in as the real service behaves where clients get it wrong: App JWTs and
// installation tokens that expire on its clock, bot logins, read-after-write lag on the lists,
// push-to-pull-request lag, and the limits on content creation (packages/testing/README.md).
import { createSign } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GitHubStandIn, startGitHubStandIn } from "../src/index.js";

const T0 = Date.parse("2026-01-05T10:00:00.000Z");
let clock = T0;
let gh: GitHubStandIn;

function call(
  path: string,
  token: string,
  init: { method?: string; body?: unknown } = {},
): Promise<Response> {
  return fetch(`${gh.url}${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${token}`, "user-agent": "stand-in-test" },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
}

/** An App JWT signed with the App's key (RS256), its times on `at` (seconds). */
function jwt(appId: number, key: string, at = Math.floor(clock / 1000)): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const head = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iat: at - 30, exp: at + 540, iss: appId })}`;
  const sig = createSign("RSA-SHA256").update(head).sign(key).toString("base64url");
  return `${head}.${sig}`;
}

beforeEach(async () => {
  clock = T0;
  gh = await startGitHubStandIn({ now: () => clock });
  gh.createRepo({ owner: "acme", name: "app", branches: ["main", "feature"] });
});

afterEach(async () => {
  gh.assertNoViolations();
  await gh.stop();
});

describe("GitHub stand-in: Apps and their installation tokens", () => {
  it("mints an hour's installation token for the App's JWT; the token acts as <slug>[bot]", async () => {
    const app = gh.createApp({ slug: "my-app" });
    const me = await call("/app", jwt(app.appId, app.privateKey));
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id: app.appId, slug: "my-app" });
    const res = await call(
      `/app/installations/${app.installationId}/access_tokens`,
      jwt(app.appId, app.privateKey),
      { method: "POST" },
    );
    expect(res.status).toBe(201);
    const { token, expires_at } = (await res.json()) as { token: string; expires_at: string };
    expect(Date.parse(expires_at)).toBe(T0 + 3_600_000);
    const issue = await call("/repos/acme/app/issues", token, {
      method: "POST",
      body: { title: "t" },
    });
    expect(await issue.json()).toMatchObject({ user: { login: "my-app[bot]", type: "Bot" } });
    // An installation token has no "authenticated user".
    const user = await call("/user", token);
    expect(user.status).toBe(403);
    expect(await user.json()).toMatchObject({ message: "Resource not accessible by integration" });
    const bot = await call(`/users/${encodeURIComponent("my-app[bot]")}`, token);
    expect(await bot.json()).toMatchObject({ login: "my-app[bot]", type: "Bot" });
    // An hour later on the stand-in's clock the token is refused, and counted as expired.
    clock += 3_600_000;
    expect((await call("/repos/acme/app/issues", token)).status).toBe(401);
    expect(gh.expiredTokenRefusals()).toBe(1);
    expect(gh.installationTokensMinted()).toBe(1);
  });

  it("refuses a JWT its clock finds expired or issued later, with the Date that shows its time", async () => {
    const app = gh.createApp({ slug: "my-app" });
    const past = await call("/app", jwt(app.appId, app.privateKey, Math.floor(T0 / 1000) - 3600));
    expect(past.status).toBe(401);
    expect(((await past.json()) as { message: string }).message).toMatch(/'exp'/);
    expect(Date.parse(String(past.headers.get("date")))).toBe(T0);
    const later = await call("/app", jwt(app.appId, app.privateKey, Math.floor(T0 / 1000) + 3600));
    expect(((await later.json()) as { message: string }).message).toMatch(/'iat'/);
  });
});

describe("GitHub stand-in: lags", () => {
  it("shows a create in the lists only listLagMs later", async () => {
    gh.setListLag(2000);
    const made = await call("/repos/acme/app/issues", gh.token, {
      method: "POST",
      body: { title: "t" },
    });
    expect(made.status).toBe(201);
    const list = async () =>
      ((await (await call("/repos/acme/app/issues?state=all", gh.token)).json()) as unknown[])
        .length;
    expect(await list()).toBe(0);
    clock += 2000;
    expect(await list()).toBe(1);
  });

  it("sees a push in the pull requests API only pushLagMs later", async () => {
    gh.setPushLag(3000);
    gh.setBranch("acme", "app", "fresh");
    const pr = { title: "x", head: "fresh", base: "main" };
    const early = await call("/repos/acme/app/pulls", gh.token, { method: "POST", body: pr });
    expect(early.status).toBe(422);
    expect(await early.json()).toMatchObject({ errors: [{ field: "head", code: "invalid" }] });
    clock += 3000;
    const late = await call("/repos/acme/app/pulls", gh.token, { method: "POST", body: pr });
    expect(late.status).toBe(201);
  });
});

describe("GitHub stand-in: content creation", () => {
  it("refuses the 81st create in a minute with a secondary rate limit, and lets it through after", async () => {
    for (let i = 0; i < 80; i++) {
      const r = await call("/repos/acme/app/issues", gh.token, {
        method: "POST",
        body: { title: `t${i}` },
      });
      expect(r.status).toBe(201);
    }
    const refused = await call("/repos/acme/app/issues", gh.token, {
      method: "POST",
      body: { title: "one more" },
    });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(gh.contentRateLimitRefusals()).toBe(1);
    clock += 60_000;
    const after = await call("/repos/acme/app/issues", gh.token, {
      method: "POST",
      body: { title: "one more" },
    });
    expect(after.status).toBe(201);
  });
});
