import type { JournalStore, RunRecord } from "@idem/journal";
import type { ReplayPlan } from "./replay-plan.js";

/**
 * Job IDs per `runs.replay` call.
 * TODO(journal): remove once the store takes a selection of any size (SQLite binds each ID as a
 * parameter; see /tmp/idem-coord.md).
 */
const REPLAY_CHUNK = 5000;

/**
 * Creates the next run generation (pending, empty effects ledger) of every output a replay plan
 * selected (`plan.jobIds`; the busy ones are left alone), in recording order. Each generation's
 * interpreter decides every effect again and probes the targets, so replaying twice never applies an
 * effect twice: a second replay only makes one more generation that finds everything present.
 * `forceUnprobeable` marks the new runs to send again effects that cannot be probed and were sent.
 *
 * Not atomic across more than 5,000 outputs: a failure part-way leaves the generations created so
 * far (each is a valid replay on its own). Journal errors propagate.
 */
export async function createReplayRuns(
  journal: JournalStore,
  plan: Pick<ReplayPlan, "jobIds">,
  options: { actor: string; forceUnprobeable?: boolean },
): Promise<RunRecord[]> {
  const created: RunRecord[] = [];
  const replayOptions = {
    actor: options.actor,
    forceUnprobeable: options.forceUnprobeable ?? false,
  };
  for (let i = 0; i < plan.jobIds.length; i += REPLAY_CHUNK) {
    const jobIds = plan.jobIds.slice(i, i + REPLAY_CHUNK);
    created.push(...(await journal.runs.replay({ jobIds }, replayOptions)));
  }
  return created;
}
