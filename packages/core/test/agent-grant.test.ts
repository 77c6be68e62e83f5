import { type Config, isIdemError, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { assertCredentialScopes, grantOf, scopeIssues } from "../src/access/agent-grant.js";
import { OPERATOR, resolveCredentials } from "../src/access/credentials.js";
import { checkOutput, isCheckedOutput, recordOutput } from "../src/record/record-output.js";
import { loadKinds } from "../src/validate/load-kinds.js";

const TOKEN_A = "alpha-token-0123456789";
const TOKEN_B = "beta-token-0123456789";
const OPERATOR_TOKEN = "operator-token-0123456789";

const BASE = {
  repos: { site: { path: "site" }, docs: { path: "docs" } },
  roots: { outbox: { path: "outbox" }, private: { path: "private" } },
  api: { token: OPERATOR_TOKEN },
  credentials: {
    alpha: { tokenEnv: "TOKEN_A", effects: { "file.write": ["outbox"], "git.commit": "*" } },
    beta: { tokenEnv: "TOKEN_B" },
  },
};

function config(raw: Record<string, unknown> = BASE): Config {
  const r = parseConfig(raw, { dir: "/nonexistent" });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

const write = (root: string) => ({ kind: "file.write", root, path: "a.txt", content: "x" });
const commit = (repo: string) => ({
  kind: "git.commit",
  repo,
  message: "m",
  files: [{ path: "a.txt", content: "x" }],
});
const output = (jobId: string, agent: string, effects: unknown[]) => ({ jobId, agent, effects });

/** What a credential's refusal of the config names (`details.key`). */
function keyOf(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (isIdemError(e, "INVALID_CONFIG")) return String(e.details?.key);
    throw e;
  }
  return undefined;
}

describe("an agent's scope", () => {
  const c = config();
  const alpha = grantOf(c, "alpha");

  it("allows the kinds it names, on the aliases listed (or every one with *), and nothing else", async () => {
    const kinds = await loadKinds(c);
    const issues = (effects: unknown[]) => {
      const checked = checkOutput(output("j", "alpha", effects), c, kinds);
      if (!isCheckedOutput(checked)) throw new Error(JSON.stringify(checked));
      return scopeIssues(checked.output, alpha ?? expect.fail("no grant"), kinds).map(
        (i) => i.path,
      );
    };
    expect(issues([write("outbox"), commit("site"), commit("docs")])).toEqual([]);
    expect(issues([write("outbox"), write("private")])).toEqual(["effects.1.root"]);
    expect(
      issues([{ kind: "git.patch", repo: "site", message: "m", patch: "diff --git a/a b/a\n" }]),
    ).toEqual(["effects.0.kind"]);
    // No effects named: outputs without effects only.
    const beta = grantOf(c, "beta") ?? expect.fail("no grant");
    const checked = checkOutput(output("j", "beta", [write("outbox")]), c, kinds);
    if (!isCheckedOutput(checked)) throw new Error("invalid");
    expect(scopeIssues(checked.output, beta, kinds).map((i) => i.path)).toEqual(["effects.0.kind"]);
  });

  it("is checked against the kinds at load: a kind or an alias the config cannot use names its key", async () => {
    const bad = (effects: Record<string, unknown>) =>
      config({ ...BASE, credentials: { alpha: { tokenEnv: "TOKEN_A", effects } } });
    const kinds = await loadKinds(c);
    expect(keyOf(() => assertCredentialScopes(bad({ "file.write": ["outbox"] }), kinds))).toBe(
      undefined,
    );
    expect(keyOf(() => assertCredentialScopes(bad({ "file.write": ["outbx"] }), kinds))).toBe(
      "credentials.alpha.effects.file.write.0",
    );
    expect(keyOf(() => assertCredentialScopes(bad({ "acme.thing": "*" }), kinds))).toBe(
      "credentials.alpha.effects.acme.thing",
    );
    // A kind whose config section is missing cannot be used either.
    expect(keyOf(() => assertCredentialScopes(bad({ "slack.message": "*" }), kinds))).toBe(
      "credentials.alpha.effects.slack.message",
    );
    await expect(loadKinds(bad({ "git.commit": ["nope"] }))).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { key: "credentials.alpha.effects.git.commit.0" },
    });
  });

  it("refuses a malformed entry and an agent token without api.token at parse, naming the field", () => {
    const issues = (raw: Record<string, unknown>) => {
      const r = parseConfig(raw, { dir: "/nonexistent" });
      return r.ok ? [] : r.issues.map((i) => i.path);
    };
    expect(issues({ ...BASE, api: {} })).toEqual(["api.token"]);
    expect(issues({ credentials: { alpha: { tokenEnv: "A-B" } } })).toEqual([
      "credentials.alpha.tokenEnv",
    ]);
    expect(issues({ credentials: { Alpha: {} } })).toEqual(["credentials.Alpha"]);
    expect(issues({ credentials: { alpha: { token: "inline" } } })).toEqual(["credentials.alpha"]);
    expect(issues({ credentials: { alpha: { effects: { write: "*" } } } })).toEqual([
      "credentials.alpha.effects.write",
    ]);
    // Without a token, a credential for NATS alone needs no api.token.
    expect(issues({ credentials: { alpha: { effects: {} } } })).toEqual([]);
  });
});

describe("resolveCredentials", () => {
  const c = config();
  const env = { TOKEN_A, TOKEN_B };

  it("knows the operator's token and each agent's, and nothing else", () => {
    const creds = resolveCredentials(c, env);
    expect(creds.authenticate(`Bearer ${OPERATOR_TOKEN}`)).toBe(OPERATOR);
    expect(creds.authenticate(`Bearer ${TOKEN_A}`)).toMatchObject({
      operator: false,
      grant: { agent: "alpha" },
    });
    expect(creds.authenticate(`bearer ${TOKEN_B}`)).toMatchObject({ grant: { agent: "beta" } });
    expect(creds.authenticate("Bearer nope")).toBeUndefined();
    expect(creds.authenticate(undefined)).toBeUndefined();
    expect(creds.authenticate(TOKEN_A)).toBeUndefined();
    // Without api.token every caller is the operator.
    expect(resolveCredentials(config({}), {}).authenticate(undefined)).toBe(OPERATOR);
  });

  it("refuses an unset, short or shared token naming the key and the variable, never the value", () => {
    const refusal = (e: Record<string, string>) => {
      try {
        resolveCredentials(c, e);
      } catch (err) {
        if (!isIdemError(err, "INVALID_CONFIG")) throw err;
        return { key: err.details?.key, message: err.message };
      }
      return undefined;
    };
    expect(refusal({ TOKEN_A })).toMatchObject({ key: "credentials.beta.tokenEnv" });
    expect(refusal({ TOKEN_A, TOKEN_B: "" })?.message).toContain("TOKEN_B is not set");
    expect(refusal({ TOKEN_A: "short", TOKEN_B })).toMatchObject({
      key: "credentials.alpha.tokenEnv",
    });
    const shared = refusal({ TOKEN_A, TOKEN_B: TOKEN_A });
    expect(shared?.key).toBe("credentials.beta.tokenEnv");
    expect(shared?.message).not.toContain(TOKEN_A);
    expect(refusal({ TOKEN_A: OPERATOR_TOKEN, TOKEN_B })?.message).toContain("api.token");
  });
});

describe("recordOutput with an agent's grant", () => {
  it("records only as its agent, for its enqueued jobs, within its scope; the operator keeps every right", async () => {
    await using t = await tempJournal();
    const c = config();
    const kinds = await loadKinds(c);
    const alpha = grantOf(c, "alpha");
    await t.journal.jobs.enqueue({ jobId: "a-1", agent: "alpha", input: {} });
    await t.journal.jobs.enqueue({ jobId: "b-1", agent: "beta", input: {} });
    const record = (o: unknown, operator?: "operator") =>
      recordOutput({
        journal: t.journal,
        config: c,
        kinds,
        output: o,
        source: "http",
        grant: operator ? undefined : alpha,
      });
    const refused = async (o: unknown) => {
      const r = await record(o);
      return { status: r.status, paths: "issues" in r ? r.issues.map((i) => i.path) : [] };
    };
    expect(await refused(output("b-1", "beta", []))).toEqual({
      status: "forbidden",
      paths: ["agent"],
    });
    expect(await refused(output("b-1", "alpha", []))).toEqual({
      status: "invalid",
      paths: ["agent"],
    });
    expect(await refused(output("nobody-1", "alpha", []))).toEqual({
      status: "forbidden",
      paths: ["jobId"],
    });
    expect(await refused(output("a-1", "alpha", [write("private")]))).toEqual({
      status: "forbidden",
      paths: ["effects.0.root"],
    });
    expect((await t.journal.status()).outputs).toBe(0);
    expect((await record(output("a-1", "alpha", [write("outbox")]))).status).toBe("recorded");
    // The operator: any agent's job in that agent's name, any effect, a job nobody enqueued.
    expect((await record(output("b-1", "beta", [write("private")]), "operator")).status).toBe(
      "recorded",
    );
    expect((await record(output("nobody-1", "alpha", []), "operator")).status).toBe("recorded");
  });
});
