import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { OutputRecord } from "@idem/journal";
import { parseEffectKey } from "@idem/schema";

/** The `jobId` of an archived line: the first one in it is its output's (`{"output":{"seq":..,"jobId":..`). */
const ARCHIVED_JOB = /"jobId":"((?:[^"\\]|\\.)*)"/;

/**
 * The keys at the scanned targets that no recorded effect stands behind: not an effect key at all,
 * or one whose job has no output in the journal nor in the archive that `idem prune` wrote, or
 * whose index is beyond that output's effects. The archive is read once, and only when the journal
 * leaves some key unknown. Sorted by key; read-only.
 */
export function unknownKeysOf(
  scans: ReadonlyMap<string, Map<string, string[]> | Error>,
  outputs: readonly OutputRecord[],
  archiveDir: string,
): { key: string; target: string; commits: string[] }[] {
  const effectsOf = new Map(outputs.map((o) => [o.jobId, o.output.effects.length]));
  const candidates: {
    key: string;
    target: string;
    commits: string[];
    jobId?: string;
    index?: number;
  }[] = [];
  for (const [target, scan] of scans) {
    if (scan instanceof Error) continue;
    for (const [key, commits] of scan) {
      const parsed = parseEffectKey(key);
      if (parsed) {
        const n = effectsOf.get(parsed.jobId);
        if (n !== undefined && parsed.index < n) continue;
        candidates.push({ key, target, commits, jobId: parsed.jobId, index: parsed.index });
      } else {
        candidates.push({ key, target, commits });
      }
    }
  }
  if (candidates.length === 0) return [];
  const archived = archivedEffects(
    archiveDir,
    new Set(candidates.flatMap((c) => (c.jobId === undefined ? [] : [c.jobId]))),
  );
  return candidates
    .filter((c) => {
      if (c.jobId === undefined || c.index === undefined) return true;
      const n = archived.get(c.jobId);
      return n === undefined || c.index >= n;
    })
    .map(({ key, target, commits }) => ({ key, target, commits }))
    .sort((a, b) => a.key.localeCompare(b.key) || a.target.localeCompare(b.target));
}

/** How many effects each of `jobIds` had, for those the archive holds. */
function archivedEffects(dir: string, jobIds: ReadonlySet<string>): Map<string, number> {
  const found = new Map<string, number>();
  if (jobIds.size === 0 || !existsSync(dir)) return found;
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      const m = ARCHIVED_JOB.exec(line.slice(0, 1000));
      if (!m?.[1]) continue;
      let jobId: string;
      try {
        jobId = JSON.parse(`"${m[1]}"`) as string;
      } catch {
        continue;
      }
      if (!jobIds.has(jobId)) continue;
      try {
        const entry = JSON.parse(line) as { output?: { output?: { effects?: unknown[] } } };
        found.set(jobId, entry.output?.output?.effects?.length ?? 0);
      } catch {
        // A line cut short by a prune killed mid-write: that job is not known from it.
      }
    }
  }
  return found;
}
