import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { EffectState, JournalStore } from "@idem/journal";
import { type Config, type EffectSpec, type FailureClass, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { buildAudit, isAuditClean } from "../src/audit/audit-report.js";
import { resolveUncertain } from "../src/dead-letters/resolve-uncertain.js";
import { openEffects } from "../src/effects/open-effects.js";
import { kindsOf } from "../src/validate/load-kinds.js";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8" }).trim();

async function setup() {
  const t = await tempJournal({ synchronous: "OFF" });
  const repo = join(t.dir, "site");
  mkdirSync(repo);
  mkdirSync(join(t.dir, "outbox"));
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.email", "t@t");
  git(repo, "config", "user.name", "t");
  writeFileSync(join(repo, "a.txt"), "one\n");
  git(repo, "add", "a.txt");
  git(repo, "commit", "-q", "-m", "init");
  const r = parseConfig(
    {
      repos: { site: { path: "site" } },
      roots: { outbox: { path: "outbox" } },
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9" } } },
    },
    { dir: t.dir },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  const config: Config = r.config;
  const effects = openEffects(config, { kinds: kindsOf(config, { durable: false }) });
  return {
    ...t,
    config,
    effects,
    repo,
    outbox: join(t.dir, "outbox"),
    async [Symbol.asyncDispose]() {
      await effects.close();
      await t[Symbol.asyncDispose]();
    },
  };
}

/** Records `jobId` with one effect and ends its run dead with that effect in `state`. */
async function deadRun(
  journal: JournalStore,
  jobId: string,
  spec: EffectSpec,
  state: EffectState,
  failure: { class: FailureClass; detail: Record<string, unknown>; error: string },
): Promise<void> {
  await journal.outputs.record(
    { jobId, agent: "w", effects: [spec] },
    { source: "cli", targets: [] },
  );
  const claim = await journal.runs.claim({ owner: "t", leaseMs: 60_000, maxLeaseExpiries: 5 });
  if (!claim) throw new Error("no claim");
  const key = `${jobId}/0`;
  await journal.ledger.intend(claim.lease, { key, idx: 0, kind: spec.kind, specHash: "h" });
  if (state !== "intended") await journal.ledger.settle(claim.lease, key, state, failure.detail);
  await journal.runs.markDead(claim.lease, { class: failure.class, error: failure.error });
}

const patch = (from: string, to: string) =>
  `diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-${from}\n+${to}\n`;
const by = { reason: "checked by hand", actor: "alice" };

describe("dlq resolve, then audit, for each failure class", () => {
  it("uncertain (an http request nobody can probe): --applied is the person's word and the audit is clean", async () => {
    await using t = await setup();
    const hook: EffectSpec = { kind: "http.request", target: "hooks", method: "POST", path: "/x" };
    await deadRun(t.journal, "u", hook, "uncertain", {
      class: "uncertain",
      detail: { error: "OUTCOME_UNKNOWN: no answer" },
      error: "u/0: no answer",
    });
    const r = await resolveUncertain(t.journal, "u", { decision: "applied", ...by }, t.effects);
    expect(r.effect.state).toBe("applied");
    expect(isAuditClean(await buildAudit(t.config, t.journal, t.effects))).toBe(true);
  });

  it("conflict: --applied is refused naming the effect and why, --skipped settles it and the audit is clean", async () => {
    await using t = await setup();
    const spec: EffectSpec = {
      kind: "git.patch",
      repo: "site",
      message: "m",
      patch: patch("zzz", "two"),
    };
    await deadRun(t.journal, "c", spec, "failed", {
      class: "conflict",
      detail: { reason: "the patch does not apply" },
      error: "c/0: the patch does not apply",
    });
    const refused = resolveUncertain(t.journal, "c", { decision: "applied", ...by }, t.effects);
    await expect(refused).rejects.toMatchObject({ code: "INVALID_STATE" });
    await expect(refused).rejects.toThrow(/c\/0 \(git\.patch\).*conflict/);
    // Without a probe at hand it is refused too: a conflict cannot have happened as written.
    await expect(
      resolveUncertain(t.journal, "c", { decision: "applied", ...by }),
    ).rejects.toMatchObject({ code: "INVALID_STATE" });
    const r = await resolveUncertain(t.journal, "c", { decision: "skipped", ...by }, t.effects);
    expect(r.effect.state).toBe("skipped");
    expect(r.run).toBe("pending");
    const audit = await buildAudit(t.config, t.journal, t.effects);
    expect(audit.drift).toEqual([]);
    expect(isAuditClean(audit)).toBe(true);
  });

  it("conflict whose change is now at its target: --applied is recorded as present and the audit finds no drift", async () => {
    await using t = await setup();
    const spec: EffectSpec = {
      kind: "git.patch",
      repo: "site",
      message: "m",
      patch: patch("one", "two"),
    };
    await deadRun(t.journal, "p", spec, "failed", {
      class: "conflict",
      detail: { reason: "the patch does not apply" },
      error: "p/0: the patch does not apply",
    });
    // A person applied the change by hand.
    writeFileSync(join(t.repo, "a.txt"), "two\n");
    git(t.repo, "commit", "-q", "-am", "by hand");
    const r = await resolveUncertain(t.journal, "p", { decision: "applied", ...by }, t.effects);
    expect(r.effect.state).toBe("present");
    const audit = await buildAudit(t.config, t.journal, t.effects);
    expect(audit.drift).toEqual([]);
    expect(isAuditClean(audit)).toBe(true);
  });

  it("integrity: --applied is refused while the file is not there, --skipped settles it and the audit is clean", async () => {
    await using t = await setup();
    const spec: EffectSpec = { kind: "file.write", root: "outbox", path: "i.txt", content: "x" };
    await deadRun(t.journal, "i", spec, "failed", {
      class: "logic",
      detail: { error: "INTEGRITY: a marker that is not JSON", class: "logic" },
      error: "i/0: INTEGRITY: a marker that is not JSON",
    });
    await expect(
      resolveUncertain(t.journal, "i", { decision: "applied", ...by }, t.effects),
    ).rejects.toThrow(/i\/0 \(file\.write\).*INTEGRITY/);
    await expect(resolveUncertain(t.journal, "i", { decision: "applied", ...by })).rejects.toThrow(
      /integrity error/,
    );
    await resolveUncertain(t.journal, "i", { decision: "skipped", ...by }, t.effects);
    expect(isAuditClean(await buildAudit(t.config, t.journal, t.effects))).toBe(true);
  });

  it("transient after maxAttempts: --applied is refused while absent, recorded present once the file is there, and the audit is clean", async () => {
    await using t = await setup();
    const spec: EffectSpec = { kind: "file.write", root: "outbox", path: "t.txt", content: "x" };
    await deadRun(t.journal, "t", spec, "failed", {
      class: "transient",
      detail: { error: "IO: disk busy", class: "transient" },
      error: "t/0: IO: disk busy",
    });
    await expect(
      resolveUncertain(t.journal, "t", { decision: "applied", ...by }, t.effects),
    ).rejects.toThrow(/the probe finds it absent/);
    writeFileSync(join(t.outbox, "t.txt"), "x");
    const r = await resolveUncertain(t.journal, "t", { decision: "applied", ...by }, t.effects);
    expect(r.effect.state).toBe("present");
    expect(isAuditClean(await buildAudit(t.config, t.journal, t.effects))).toBe(true);
  });

  it("a crash left it intended (infrastructure): --skipped settles it and the audit is clean", async () => {
    await using t = await setup();
    const spec: EffectSpec = { kind: "file.write", root: "outbox", path: "c.txt", content: "x" };
    await deadRun(t.journal, "k", spec, "intended", {
      class: "infrastructure",
      detail: {},
      error: "lease expired 5 times",
    });
    const r = await resolveUncertain(t.journal, "k", { decision: "skipped", ...by }, t.effects);
    expect(r.effect.state).toBe("skipped");
    expect(isAuditClean(await buildAudit(t.config, t.journal, t.effects))).toBe(true);
  });

  it("validation (the target alias is gone): --applied is refused, --skipped settles it and the audit is clean", async () => {
    await using t = await setup();
    const spec: EffectSpec = { kind: "file.write", root: "outbox", path: "../v.txt", content: "x" };
    await deadRun(t.journal, "v", spec, "failed", {
      class: "validation",
      detail: { error: "SANDBOX_VIOLATION: path escapes", class: "validation" },
      error: "v/0: SANDBOX_VIOLATION: path escapes",
    });
    await expect(
      resolveUncertain(t.journal, "v", { decision: "applied", ...by }, t.effects),
    ).rejects.toMatchObject({ code: "INVALID_STATE" });
    await resolveUncertain(t.journal, "v", { decision: "skipped", ...by }, t.effects);
    expect(isAuditClean(await buildAudit(t.config, t.journal, t.effects))).toBe(true);
  });
});
