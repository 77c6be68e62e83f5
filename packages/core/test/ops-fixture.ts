import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { effectTargetsOf } from "@idem/effects";
import { type JournalStore, openSqliteJournal } from "@idem/journal";
import { type Config, contentHash, type EffectSpec, effectKey, parseConfig } from "@idem/schema";
import { decideEffect } from "../src/decide/decide-effect.js";
import { SupersedeIndex } from "../src/decide/supersede-index.js";
import { openEffects } from "../src/effects/open-effects.js";
import { kindsOf } from "../src/validate/load-kinds.js";

/**
 * A workspace with one git repo (`site`, branch main), one root (`outbox`) and its journal open,
 * for tests that call @idem/core directly. Real git, real SQLite. `interpret()` drives every due
 * run the way the interpreter does (the shared `decideEffect`, then probe, apply and settle), so
 * the tests need no app.
 */
export interface OpsFixture {
  dir: string;
  config: Config;
  journal: JournalStore;
  effects: ReturnType<typeof openEffects>;
  repoDir: string;
  rootDir: string;
  record(jobId: string, effects: EffectSpec[]): Promise<void>;
  /** Runs every due run to done; resolves to how many runs it completed. */
  interpret(): Promise<number>;
  close(): Promise<void>;
}

export async function opsFixture(): Promise<OpsFixture> {
  const dir = mkdtempSync(join(tmpdir(), "idem-core-ops-"));
  const raw = { repos: { site: { path: "repos/site" } }, roots: { outbox: { path: "outbox" } } };
  const repoDir = join(dir, "repos/site");
  const rootDir = join(dir, "outbox");
  initRepo(repoDir);
  mkdirSync(rootDir);
  const parsed = parseConfig(raw, { dir, file: join(dir, "idem.config.json") });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const journal = await openSqliteJournal(config.journal.path);
  const effects = openEffects(config, { kinds: kindsOf(config, { durable: false }) });
  const files = new SupersedeIndex(journal, effects.kinds);
  return {
    dir,
    config,
    journal,
    effects,
    repoDir,
    rootDir,
    async record(jobId, specs) {
      const output = { jobId, agent: "writer", effects: specs };
      const r = await journal.outputs.record(output, {
        source: "cli",
        targets: effectTargetsOf(output, config),
      });
      if (r.status !== "recorded") throw new Error(`record ${jobId}: ${r.status}`);
    },
    async interpret() {
      let done = 0;
      for (;;) {
        const claim = await journal.runs.claim({
          owner: "test",
          leaseMs: 60_000,
          maxLeaseExpiries: 5,
        });
        if (!claim) return done;
        const { lease, run, output } = claim;
        for (const [idx, spec] of output.output.effects.entries()) {
          const key = effectKey(run.jobId, idx);
          await journal.ledger.intend(lease, {
            key,
            idx,
            kind: spec.kind,
            specHash: contentHash(spec),
          });
          const decision = decideEffect({
            spec,
            key,
            generation: run.generation,
            ledger: await journal.ledger.history(key),
            forceUnprobeable: run.forceUnprobeable,
            effects,
            ...(spec.kind === "file.write" && {
              supersededBy: await files.supersededBy(output.seq, spec),
            }),
          });
          if (decision.action === "skip") {
            await journal.ledger.settle(lease, key, "skipped", { reason: decision.reason });
            continue;
          }
          if (decision.action === "uncertain") throw new Error(`${key}: ${decision.reason}`);
          const probed = decision.action === "probe" ? await effects.probe(spec, key) : undefined;
          if (probed?.status === "conflict") throw new Error(`${key}: ${probed.reason}`);
          if (probed?.status === "present") {
            await journal.ledger.settle(lease, key, "present", probed.detail);
          } else {
            await journal.ledger.settle(
              lease,
              key,
              "applied",
              await effects.apply(spec, key, { probed: probed }),
            );
          }
        }
        await journal.runs.complete(lease);
        done += 1;
      }
    },
    async close() {
      await effects.close();
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A git.commit that writes one file. */
export function commitSpec(path: string, content: string, message = `write ${path}`): EffectSpec {
  return { kind: "git.commit", repo: "site", message, files: [{ path, content }] };
}

/** git in `dir` with a fixed identity and maintenance off. */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-C", dir, "-c", "maintenance.auto=false", ...args], {
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "test",
      GIT_AUTHOR_EMAIL: "test@localhost",
      GIT_COMMITTER_NAME: "test",
      GIT_COMMITTER_EMAIL: "test@localhost",
    },
  });
}

/** `git init -b <branch>` with one initial commit. */
export function initRepo(dir: string, branch = "main"): void {
  mkdirSync(dir, { recursive: true });
  gitIn(dir, "init", "-q", "-b", branch);
  writeFileSync(join(dir, "README.md"), "# test\n");
  gitIn(dir, "add", "README.md");
  gitIn(dir, "commit", "-q", "-m", "initial");
}
