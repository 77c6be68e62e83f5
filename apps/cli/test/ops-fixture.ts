import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { kindsOf, openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter, type DrainResult } from "@idem/interpreter";
import { type JournalStore, openSqliteJournal } from "@idem/journal";
import { createLogger } from "@idem/runtime";
import { type Config, type EffectSpec, parseConfig } from "@idem/schema";
import { initRepo, type Workspace, workspace } from "./ops-helpers.js";

/**
 * A workspace with one git repo (`site`, branch main), one root (`outbox`), its journal open, and
 * an in-process interpreter to process what the test records. Real git, real SQLite.
 */
export interface OpsFixture {
  ws: Workspace;
  config: Config;
  journal: JournalStore;
  repoDir: string;
  rootDir: string;
  journalPath: string;
  record(jobId: string, effects: EffectSpec[]): Promise<void>;
  /** Drains every pending run with the real interpreter. */
  interpret(): Promise<DrainResult>;
  close(): Promise<void>;
}

export async function opsFixture(extra: Record<string, unknown> = {}): Promise<OpsFixture> {
  const ws = workspace();
  const raw = {
    repos: { site: { path: "repos/site" } },
    roots: { outbox: { path: "outbox" } },
    interpreter: { pollMs: 20, backoffMs: [20] },
    ...extra,
  };
  ws.writeConfig(raw);
  const repoDir = join(ws.dir, "repos/site");
  const rootDir = join(ws.dir, "outbox");
  initRepo(repoDir);
  mkdirSync(rootDir);
  const parsed = parseConfig(raw, { dir: ws.dir, file: ws.config });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const journal = await openSqliteJournal(config.journal.path);
  let effects: ReturnType<typeof openEffects> | undefined;
  return {
    ws,
    config,
    journal,
    repoDir,
    rootDir,
    journalPath: config.journal.path,
    async record(jobId, specs) {
      const output = { jobId, agent: "writer", effects: specs };
      const r = await journal.outputs.record(output, {
        source: "cli",
        targets: effectTargetsOf(output, config),
      });
      if (r.status !== "recorded") throw new Error(`record ${jobId}: ${r.status}`);
    },
    async interpret() {
      effects ??= openEffects(config, { kinds: kindsOf(config, { durable: false }) });
      const interpreter = createInterpreter({
        config,
        journal,
        effects,
        logger: createLogger({ name: "idem-interpreter", level: "silent" }),
      });
      return interpreter.drain();
    },
    async close() {
      await effects?.close();
      await journal.close();
      ws.remove();
    },
  };
}

/** A git.commit that writes one file. */
export function commitSpec(path: string, content: string, message = `write ${path}`): EffectSpec {
  return { kind: "git.commit", repo: "site", message, files: [{ path, content }] };
}
