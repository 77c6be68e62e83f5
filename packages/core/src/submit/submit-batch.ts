import type { JournalStore, OutputSource } from "@idem/journal";
import type { AgentOutput, Config } from "@idem/schema";
import { type SubmitResult, submitOutput } from "./submit-output.js";

/** How {@link submitOutputs} records a batch. */
export interface SubmitOutputsOptions {
  /** Outputs in flight at once (default 16): the journal's group commit shares their fsyncs. */
  concurrency?: number;
  /** Called as each output settles (a progress bar). */
  onSettled?: (index: number, result: SubmitResult) => void;
}

/**
 * Records many outputs in one process, each as by {@link submitOutput} (checked again, then
 * recorded atomically on its own; the batch as a whole is not atomic), and answers one submit
 * result per output in the order given. First write wins per job: the same content again is
 * `duplicate`, other content `conflict` (kept in `rejections`). Safe to repeat: after a failure, the
 * same batch again records the rest and answers what was recorded as `duplicate`.
 * @throws whatever the journal throws (`DISK_FULL`, `IO`), once the outputs in flight have
 * settled; those recorded before stay recorded.
 */
export async function submitOutputs(
  journal: JournalStore,
  config: Config,
  outputs: readonly AgentOutput[],
  source: OutputSource,
  options: SubmitOutputsOptions = {},
): Promise<SubmitResult[]> {
  const results: SubmitResult[] = new Array(outputs.length);
  let next = 0;
  let fatal: { error: unknown } | undefined;
  const worker = async () => {
    while (next < outputs.length && !fatal) {
      const i = next++;
      try {
        results[i] = await submitOutput({ journal, config, raw: outputs[i], source });
      } catch (e) {
        fatal ??= { error: e };
        return;
      }
      options.onSettled?.(i, results[i] as SubmitResult);
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 16, outputs.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (fatal) throw fatal.error;
  return results;
}
