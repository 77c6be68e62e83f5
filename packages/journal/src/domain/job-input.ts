import { canonicalJson, type Job, sha256Hex } from "@idem/schema";

/**
 * A job's canonical input and its input hash: sha256 of the canonical `{agent, input}`, built
 * around the canonical input (keys "agent" < "input", no whitespace) so the input is serialized
 * once. Two submissions of one job ID are the same job exactly when their hashes are equal; the
 * hash is stored, so it must never change (journals of earlier versions hold it).
 */
export function jobInput(job: Pick<Job, "agent" | "input">): { input: string; hash: string } {
  const input = canonicalJson(job.input);
  return { input, hash: sha256Hex(`{"agent":${canonicalJson(job.agent)},"input":${input}}`) };
}
