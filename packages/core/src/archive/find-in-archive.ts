import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ArchivedOutput } from "@idem/journal";

/**
 * Looks a job up in the JSONL archive that `idem prune` writes (one ArchivedOutput per line), in
 * the archive's files by name (oldest prune first); undefined when the folder or the job is
 * missing. Read-only. A line that is not JSON (a prune killed mid-line) throws a SyntaxError only
 * when it names the job.
 */
export function findInArchive(dir: string, jobId: string): ArchivedOutput | undefined {
  if (!existsSync(dir)) return undefined;
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (line === "" || !line.includes(JSON.stringify(jobId))) continue;
      const entry = JSON.parse(line) as ArchivedOutput;
      if (entry.output.jobId === jobId) return entry;
    }
  }
  return undefined;
}
