import type { JournalStore } from "@idem/journal";
import type { AddFinding } from "./finding.js";

/**
 * Conflicting bodies the journal did not keep (over its cap per job, `status().rejectedBodies`): a
 * warning naming how many and the cap, since an agent that keeps answering one job with other
 * content is worth a look. Reads only.
 */
export async function checkRejectedBodies(journal: JournalStore, add: AddFinding): Promise<void> {
  const { perJob, dropped } = (await journal.status()).rejectedBodies;
  if (dropped === 0) return;
  add(
    "warning",
    "journal",
    `${dropped} conflicting output bodies were not kept (over ${perJob} per job: only their hash, source and time are)`,
    "an agent keeps answering some job with other content: `idem show JOB` lists its rejections; see docs/concepts.md (rejections)",
  );
}
