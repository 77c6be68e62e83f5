import { describeFilter, type PlanEntry, type ReplayPlan, replayPlanJson } from "@idem/core";
import { color, table } from "../context.js";
import { type StyledCell, styled } from "./terminal-text.js";

/** Plans shorter than this are printed row by row; longer ones show only what is not a skip. */
const FULL_TABLE_ROWS = 50;
const MAX_TABLE_ROWS = 200;

/** The `--json` shape of docs/cli.md, the same document every front end answers (@idem/core). */
export const planJson = replayPlanJson;

function actionCell(a: PlanEntry["action"] | "keep"): StyledCell {
  if (a === "apply") return styled(color.green, a);
  if (a === "skip" || a === "keep") return styled(color.dim, a);
  return styled(color.red, a);
}

/**
 * The plan for people, leading with what will change: every row when short (the skips and keeps
 * last), otherwise everything that is not a skip.
 */
export function printPlan(p: ReplayPlan, dryRun: boolean): string {
  let out = "";
  const all: { key: string; kind: string; action: PlanEntry["action"] | "keep"; reason: string }[] =
    p.plan.length + p.kept.length <= FULL_TABLE_ROWS
      ? [...p.plan, ...p.kept.map((k) => ({ ...k, action: "keep" as const }))]
      : p.plan.filter((e) => e.action !== "skip");
  // What will change leads; the skips and keeps come after it.
  const quiet = (a: PlanEntry["action"] | "keep") => a === "skip" || a === "keep";
  const ordered = [...all.filter((e) => !quiet(e.action)), ...all.filter((e) => quiet(e.action))];
  const shown = ordered.slice(0, MAX_TABLE_ROWS);
  if (shown.length > 0) {
    out += `${table(
      ["key", "kind", "action", "reason"],
      shown.map((e) => [e.key, e.kind, actionCell(e.action), e.reason]),
    )}\n`;
  }
  const hidden = p.plan.length + p.kept.length - shown.length;
  if (hidden > 0)
    out += `${hidden} more row(s) not shown (skips and keeps); --json lists every one\n`;
  const s = p.summary;
  out += `plan${dryRun ? " (dry run: nothing changed)" : ""}: ${color.green(`${s.apply} apply`)}, ${s.skip} skip, ${s.conflict ? color.red(`${s.conflict} conflict`) : "0 conflict"}, ${s.uncertain ? color.red(`${s.uncertain} uncertain`) : "0 uncertain"} over ${p.plan.length} effect(s) of ${p.jobIds.length} output(s)\n`;
  if (p.only) {
    out += `only ${describeFilter(p.only)}: ${p.kept.length} other effect(s) of these outputs left as they were (keep)${p.untouched.length > 0 ? `; ${p.untouched.length} selected output(s) with no such effect get no new generation` : ""}\n`;
  }
  if (p.dead.length > 0) {
    out += `${color.red(`${p.dead.length} selected output(s) whose latest run is dead are left alone`)}: a replay by kind or target would leave their other effects open; replay them without a filter or settle them first (idem dlq resolve): ${p.dead.slice(0, 10).join(", ")}${p.dead.length > 10 ? ", ..." : ""}\n`;
  }
  if (p.busy.length > 0) {
    out += `${p.busy.length} selected output(s) still being interpreted are left alone: ${p.busy.slice(0, 10).join(", ")}${p.busy.length > 10 ? ", ..." : ""}\n`;
  }
  if (s.conflict > 0)
    out += "a conflict fails its run (the target moved); see docs/runbook.md before going on\n";
  return out;
}
