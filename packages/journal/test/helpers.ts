import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AgentOutput, ManualClock } from "@idem/schema";
import { openSqliteJournal, type SqliteJournalStore } from "../src/index.js";

export interface TempJournal {
  journal: SqliteJournalStore;
  clock: ManualClock;
  dir: string;
  path: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A journal in a fresh temp folder, with a manual clock and counting lease tokens. */
export async function tempJournal(
  options: { synchronous?: "FULL" | "NORMAL" } = {},
): Promise<TempJournal> {
  const dir = mkdtempSync(join(tmpdir(), "idem-journal-"));
  const path = join(dir, "journal.db");
  const clock = new ManualClock();
  let n = 0;
  const journal = await openSqliteJournal(path, {
    clock,
    ids: () => `token-${++n}`,
    synchronous: options.synchronous ?? "NORMAL",
  });
  return {
    journal,
    clock,
    dir,
    path,
    async [Symbol.asyncDispose]() {
      await journal.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function output(
  jobId: string,
  content = "hello",
  effects?: AgentOutput["effects"],
): AgentOutput {
  return {
    jobId,
    agent: "writer",
    summary: content,
    effects: effects ?? [
      {
        kind: "git.commit",
        repo: "site",
        message: `write ${jobId}`,
        files: [{ path: `${jobId}.txt`, content }],
      },
    ],
  };
}

export const CLAIM = { owner: "test", leaseMs: 1000, maxLeaseExpiries: 3 };
