import type { JournalStore, OutputSource } from "@idem/journal";
import type { Config } from "@idem/schema";
import { parseSubmission, type SubmitResult, submitOutput } from "./submit-output.js";

/**
 * Validates raw submitted text (size, JSON, the AgentOutput schema and config) and records it: the
 * text path of `idem submit` and of any front end that receives a body. An invalid submission
 * writes nothing; the answer is as {@link submitOutput}'s (first write wins, the same content
 * again is `duplicate`, other content `conflict`). Safe to repeat.
 * @throws whatever the journal throws when recording; nothing is recorded then.
 */
export async function submitText(
  journal: JournalStore,
  config: Config,
  text: string,
  source: OutputSource,
): Promise<SubmitResult> {
  const parsed = parseSubmission(text, config.limits.maxOutputBytes);
  return parsed.ok ? submitOutput({ journal, config, raw: parsed.value, source }) : parsed.result;
}
