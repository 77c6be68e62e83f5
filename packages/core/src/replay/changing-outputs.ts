import type { ReplayPlan } from "./replay-plan.js";

/**
 * The outputs of a replay plan whose new generation would change something: an effect to apply,
 * or one that would end in a conflict or uncertain (a person then looks at it). An output whose
 * every effect is found at its target (all skips) would only probe them again: the console creates
 * no generation for it, as `terraform apply` touches only what its plan changes. In the plan's
 * recording order.
 */
export function changingJobIds(plan: Pick<ReplayPlan, "plan" | "jobIds">): string[] {
  const changing = new Set(plan.plan.filter((e) => e.action !== "skip").map((e) => e.jobId));
  return plan.jobIds.filter((j) => changing.has(j));
}
