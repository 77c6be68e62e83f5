// The end-to-end fuzz suite of issue 31: generated outputs go through the submit path (the body's
// bytes, as the HTTP API takes them); every one is either refused before record, naming a field
// it must name, or recorded and then interpreted against real targets (a git repository, a file
// root, a local HTTP server), where each effect must be applied exactly once. Afterwards the
// repository passes `git fsck` and a clone with NTFS and HFS+ protection and transfer.fsckObjects,
// and nothing was written outside a target. IDEM_FUZZ_RUNS and IDEM_FUZZ_SEED vary the sample.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import { openEffects, parseSubmission, submitOutput } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { silentLogger } from "@idem/runtime";
import { effectKey } from "@idem/schema";
import { tempDir } from "@idem/testing";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createWorkspace,
  git,
  openWorkspaceJournal,
  trailerCounts,
} from "../chaos/interpreter-fixture.js";
import {
  bodyOf,
  effectOf,
  folderOf,
  type Plan,
  refusals,
  SEED,
  submissionPlan,
} from "./end-to-end-cases.js";

const RUNS = Number(process.env.IDEM_FUZZ_RUNS ?? 120);
const SEED_VALUE = Number(process.env.IDEM_FUZZ_SEED ?? 31);

interface Received {
  path: string;
  key: string;
  header: string | undefined;
}

/** Every file under `dir` (relative), but what `skip` says, with a hash of its content. */
function snapshot(dir: string, skip: (rel: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const abs = join(d, e.name);
      const rel = relative(dir, abs);
      if (skip(rel)) continue;
      if (e.isDirectory()) walk(abs);
      else out.set(rel, createHash("sha256").update(readFileSync(abs)).digest("hex"));
    }
  };
  walk(dir);
  return out;
}

describe("end-to-end fuzzing of hostile agent output (issue 31)", () => {
  it(`applies every accepted output of ${RUNS} exactly once and refuses the rest naming a field; the repository stays cloneable`, async () => {
    const received: Received[] = [];
    const server = createServer((req, res) => {
      const key = req.headers["idempotency-key"];
      received.push({
        path: req.url ?? "",
        key: typeof key === "string" ? key : "",
        header: req.headers["x-fuzz"] as string | undefined,
      });
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    await using dir = await tempDir("idem-fuzz-e2e-");
    const { port } = server.address() as AddressInfo;
    const ws = await createWorkspace(
      dir.path,
      { backoffMs: [10], maxAttempts: 2 },
      { http: { targets: { hooks: { baseUrl: `http://127.0.0.1:${port}/api` } } } },
    );
    const samples = fc.sample(submissionPlan, { numRuns: RUNS, seed: SEED_VALUE });
    // One seed file per rename, committed before anything runs.
    let seeds = 0;
    const seedOf = new Map<Plan, string>();
    for (const s of samples)
      for (const p of s.plans) if (p.kind === "rename") seedOf.set(p, `seed/${seeds++}.txt`);
    for (const seed of seedOf.values()) {
      execFileSync("mkdir", ["-p", join(ws.repoPath, "seed")]);
      writeFileSync(join(ws.repoPath, seed), SEED);
    }
    await git(ws.repoPath, "add", "-A");
    await git(ws.repoPath, "commit", "-q", "-m", "seeds");
    const outsideTargets = (rel: string) =>
      rel === ".idem" || rel.startsWith("repos/site") || rel.startsWith("outbox");
    const before = snapshot(dir.path, outsideTargets);
    const gitDirBefore = snapshot(join(ws.repoPath, ".git"), (r) => !/^(hooks|config)/.test(r));

    const journal = await openWorkspaceJournal(ws);
    const accepted: { jobId: string; plans: Plan[] }[] = [];
    const effects = openEffects(ws.config);
    try {
      let n = 0;
      for (const { plans, mangle } of samples) {
        n += 1;
        const jobId = `e2e-${n}`;
        const output = {
          jobId,
          agent: "writer",
          summary: "s",
          effects: plans.map((p, i) => effectOf(p, jobId, i, seedOf.get(p) ?? "")),
        };
        const { body, field } = bodyOf(output, mangle);
        const parsed = parseSubmission(body, ws.config.limits.maxOutputBytes);
        const answer = parsed.ok
          ? await submitOutput({ journal, config: ws.config, raw: parsed.value, source: "http" })
          : parsed.result;
        const paths = (answer.issues ?? []).map((i) => i.path);
        const what = `${jobId} ${mangle} ${JSON.stringify(plans)}: ${JSON.stringify(answer.issues)}`;
        const expected = plans.flatMap((p, i) => refusals(p).map((f) => `effects.${i}.${f}`));
        if (field !== undefined) {
          expect(answer.status, what).toBe("invalid");
          expect(paths, what).toContain(field);
        } else if (expected.length > 0) {
          expect(answer.status, what).toBe("invalid");
          expect(
            paths.some((p) => expected.some((e) => p.startsWith(e))),
            what,
          ).toBe(true);
        } else {
          expect(answer.status, what).toBe("recorded");
          accepted.push({ jobId, plans });
        }
        if (answer.status === "invalid") expect(await journal.outputs.has(jobId)).toBe(false);
      }
      // Both answers occur often enough for the suite to mean something.
      expect(accepted.length).toBeGreaterThan(RUNS / 5);
      expect(RUNS - accepted.length).toBeGreaterThan(RUNS / 5);

      const interpreter = createInterpreter({
        config: ws.config,
        journal,
        effects,
        logger: silentLogger(),
      });
      const drained = await interpreter.drain();
      expect(drained.dead, JSON.stringify(drained.dead)).toEqual([]);

      const keys = await trailerCounts(ws.repoPath);
      const show = (p: string) =>
        spawnSync("git", ["show", `main:${p}`], { cwd: ws.repoPath, encoding: "utf8" });
      for (const { jobId, plans } of accepted) {
        const run = await journal.runs.latest(jobId);
        expect(run?.state, jobId).toBe("done");
        for (const row of await journal.ledger.forJob(jobId))
          expect(["applied", "present"], `${row.key}: ${row.state}`).toContain(row.state);
        plans.forEach((p, i) => {
          const key = effectKey(jobId, i);
          const at = `${folderOf(jobId, i)}/${"path" in p ? p.path : ""}`;
          if (p.kind === "commit" || p.kind === "new-patch" || p.kind === "rename")
            expect(keys.get(key), key).toBe(1);
          if (p.kind === "commit") expect(show(at).stdout, key).toBe(`content of ${jobId}\n`);
          if (p.kind === "new-patch") expect(show(at).stdout, key).toBe(`patched\n${jobId}\n`);
          if (p.kind === "rename") {
            expect(show(at).stdout, key).toBe(p.hunk ? "one\nTWO\nthree\n" : SEED);
            expect(show(seedOf.get(p) as string).status, key).not.toBe(0);
          }
          if (p.kind === "write")
            expect(readFileSync(join(ws.outboxPath, at), "utf8"), key).toBe(`file of ${jobId}\n`);
          if (p.kind === "http") {
            const got = received.filter((r) => r.key === key);
            expect(got.length, key).toBe(1);
            expect(got[0]?.path, key).toBe(`/api${p.path}`);
            expect(got[0]?.header, key).toBe(p.header);
          }
        });
      }
      // Nothing but the keys of accepted outputs reached the HTTP server.
      const httpKeys = new Set(
        accepted.flatMap(({ jobId, plans }) =>
          plans.flatMap((p, i) => (p.kind === "http" ? [effectKey(jobId, i)] : [])),
        ),
      );
      expect(received.filter((r) => !httpKeys.has(r.key))).toEqual([]);
    } finally {
      await effects.close();
      await journal.close();
      server.close();
    }

    // The repository: clean, intact, and cloneable where git protects NTFS and HFS+ users.
    expect(await git(ws.repoPath, "status", "--porcelain")).toBe("");
    const fsck = spawnSync("git", ["fsck", "--no-progress"], {
      cwd: ws.repoPath,
      encoding: "utf8",
    });
    expect(fsck.status, fsck.stderr + fsck.stdout).toBe(0);
    expect(fsck.stderr + fsck.stdout).not.toMatch(/error|warning/i);
    const clone = spawnSync(
      "git",
      [
        "-c",
        "core.protectNTFS=true",
        "-c",
        "core.protectHFS=true",
        "-c",
        "transfer.fsckObjects=true",
        "clone",
        "-q",
        ws.repoPath,
        join(dir.path, "clone"),
      ],
      { encoding: "utf8" },
    );
    expect(clone.status, clone.stderr).toBe(0);
    // Nothing written outside a target, nor into the repository's hooks or config.
    expect(snapshot(dir.path, (r) => outsideTargets(r) || r === "clone")).toEqual(before);
    expect(snapshot(join(ws.repoPath, ".git"), (r) => !/^(hooks|config)/.test(r))).toEqual(
      gitDirBefore,
    );
    const leftovers = snapshot(ws.outboxPath, () => false);
    for (const rel of leftovers.keys()) expect(rel, rel).toMatch(/^e2e-\d+\//);
    expect([...leftovers.keys()].filter((r) => /\.idem-.*\.tmp$/.test(r))).toEqual([]);
  });
});
