import { type KindRegistry, recordedSpecsProblem } from "@idem/effects";
import { DAMAGED_OUTPUT_ENTRY, type JournalStore } from "@idem/journal";
import type { Config } from "@idem/schema";
import { kindsOf } from "../validate/load-kinds.js";
import type { AddFinding } from "./finding.js";

/** Outputs read per page of the pass over the journal. */
const PAGE = 1000;

/**
 * Every damaged output row of the journal, one violation each (docs/runbook.md, "A damaged
 * output"): a row the store cannot read as an output (`outputs.damaged()`: bytes that are not what
 * was recorded, not JSON, not the AgentOutput shape), and an output whose effects their kinds'
 * schemas refuse (a spec without its fields; a value refused today is `can never be applied`). One pass over the outputs, in pages. Reads only.
 */
export async function checkDamagedOutputs(
  journal: JournalStore,
  config: Config,
  add: AddFinding,
): Promise<void> {
  const fix = `its run ends dead (class integrity) and nothing of it is applied; restore the row from a backup or replace the output as ${DAMAGED_OUTPUT_ENTRY} says`;
  for (const d of await journal.outputs.damaged())
    add("violation", "journal", `output of job ${d.jobId} is damaged: ${d.problem}`, fix);
  let kinds: KindRegistry;
  try {
    kinds = kindsOf(config);
  } catch {
    return; // the kinds section is doctor's own finding (checkKinds)
  }
  for (let afterSeq = 0; ; ) {
    const page = await journal.outputs.page({ all: true }, { afterSeq, limit: PAGE });
    for (const o of page) {
      const found = recordedSpecsProblem(o.output.effects, kinds);
      if (found?.class === "integrity")
        add("violation", "journal", `output of job ${o.jobId} is damaged: ${found.problem}`, fix);
      else if (found !== undefined)
        add(
          "violation",
          "journal",
          `output of job ${o.jobId} can never be applied: ${found.problem}`,
          `its kind refuses it today (it was recorded before that check): its run ends dead (class validation); replace the output as ${DAMAGED_OUTPUT_ENTRY} says`,
        );
    }
    const last = page.at(-1);
    if (!last || page.length < PAGE) return;
    afterSeq = last.seq;
  }
}
