import { type Config, type EffectSpec, isIdemError, parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { grantCovers } from "../src/approvals/approval-gate.js";
import {
  approvalReasons,
  describeApprovalRules,
  globRegExp,
} from "../src/approvals/approval-rules.js";
import { kindsOf, loadKinds } from "../src/validate/load-kinds.js";

const BASE = {
  repos: { site: { path: "site" } },
  roots: { outbox: { path: "outbox" } },
  github: { tokenEnv: "GH_TOKEN", repos: { app: { owner: "acme", name: "app" } } },
};

function config(approvals: unknown): Config {
  const r = parseConfig({ ...BASE, approvals }, { dir: "/nonexistent" });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

/** The config key a refusal names (`details.key`), or the issue's path when parsing refuses. */
async function refusedKey(approvals: unknown): Promise<string | undefined> {
  const r = parseConfig({ ...BASE, approvals }, { dir: "/nonexistent" });
  if (!r.ok) return r.issues[0]?.path;
  try {
    await loadKinds(r.config);
  } catch (e) {
    if (isIdemError(e, "INVALID_CONFIG")) return String(e.details?.key);
    throw e;
  }
  return undefined;
}

const pr = (base?: string): EffectSpec => ({
  kind: "github.pull_request",
  repo: "app",
  title: "t",
  body: "b",
  head: "feature",
  ...(base === undefined ? {} : { base }),
});
const commit = (path: string): EffectSpec => ({
  kind: "git.commit",
  repo: "site",
  message: "m",
  files: [{ path, content: "x" }],
});

describe("approval rules", () => {
  it("match by kind, place, agent and the facts a kind exposes", () => {
    const c = config({
      rules: [
        { name: "prs-to-main", kind: "github.pull_request", match: { base: "main" } },
        { name: "secrets", kind: "git.commit", match: { paths: "secret/**" } },
        { name: "bots-on-site", agent: "bot", repo: "site" },
      ],
    });
    const kinds = kindsOf(c);
    expect(approvalReasons(pr("main"), "writer", c, kinds)).toEqual(["prs-to-main"]);
    expect(approvalReasons(pr("dev"), "writer", c, kinds)).toEqual([]);
    expect(approvalReasons(commit("secret/a/b.txt"), "writer", c, kinds)).toEqual(["secrets"]);
    expect(approvalReasons(commit("public/a.txt"), "writer", c, kinds)).toEqual([]);
    expect(approvalReasons(commit("public/a.txt"), "bot", c, kinds)).toEqual(["bots-on-site"]);
    expect(describeApprovalRules(c)).toEqual([
      "prs-to-main: kind github.pull_request, base main",
      "secrets: kind git.commit, paths secret/**",
      "bots-on-site: agent bot, repo site",
    ]);
  });

  it("globs: * within a segment, ** across", () => {
    expect(globRegExp("docs/*.md").test("docs/a.md")).toBe(true);
    expect(globRegExp("docs/*.md").test("docs/x/a.md")).toBe(false);
    expect(globRegExp("docs/**").test("docs/x/a.md")).toBe(true);
    expect(globRegExp("a.b").test("axb")).toBe(false);
  });

  it("are checked when the config loads, the error naming the field", async () => {
    expect(await refusedKey({ rules: [{ kind: "git.comit" }] })).toBe("approvals.rules.0.kind.0");
    expect(await refusedKey({ rules: [{ repo: "nope" }] })).toBe("approvals.rules.0.repo.0");
    expect(await refusedKey({ rules: [{ kind: "git.commit", match: { base: "main" } }] })).toBe(
      "approvals.rules.0.match.base",
    );
    expect(await refusedKey({ rules: [{ match: { base: "main" } }] })).toBe(
      "approvals.rules.0.match",
    );
    expect(await refusedKey({ rules: [{ kind: "git.commit", colour: "red" }] })).toBe(
      "approvals.rules.0",
    );
    expect(await refusedKey({ expiryMs: 0 })).toBe("approvals.expiryMs");
    expect(await refusedKey({ replay: "sometimes" })).toBe("approvals.replay");
    expect(await refusedKey({ rules: [{ kind: "git.commit", repo: "site" }] })).toBeUndefined();
  });
});

describe("an approval's reach (grantCovers)", () => {
  const grant = {
    generation: 1,
    digest: "d1",
    effects: [1, 2],
    expiresAt: 1_000,
    actor: "ana",
    reason: "ok",
    at: 0,
  };
  const at = { generation: 1, digest: "d1", index: 1, now: 500 };

  it("covers only the output's digest, the effects named and its own generation until it expires", () => {
    expect(grantCovers(grant, at, "reapprove")).toBe(true);
    expect(grantCovers(grant, { ...at, digest: "d2" }, "reapprove")).toBe(false);
    expect(grantCovers(grant, { ...at, index: 0 }, "reapprove")).toBe(false);
    // Expired: fails closed.
    expect(grantCovers(grant, { ...at, now: 1_000 }, "reapprove")).toBe(false);
    // A replay's generation needs its own, unless approvals.replay is reuse.
    expect(grantCovers(grant, { ...at, generation: 2 }, "reapprove")).toBe(false);
    expect(grantCovers(grant, { ...at, generation: 2 }, "reuse")).toBe(true);
    expect(grantCovers(grant, { ...at, generation: 2, digest: "d2" }, "reuse")).toBe(false);
  });
});
