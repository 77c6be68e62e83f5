import type { KindDrillReport, KindListing } from "@idem/core";
import { color, table } from "../context.js";
import { textLine } from "./fit-table.js";
import { styled, terminalText } from "./terminal-text.js";

/** `idem kinds` for people: one row per kind, then what each does. */
export function printKinds(listing: KindListing): string {
  let out = `${table(
    ["kind", "from", "guarantee", "probe", "scan", "knows"],
    listing.kinds.map((k) => [
      k.name,
      k.builtIn ? "built-in" : (k.module ?? ""),
      k.guarantee === k.declared ? k.guarantee : `${k.guarantee} (declares ${k.declared})`,
      k.probe === "always" ? "yes" : "per spec",
      k.scan ? "yes" : "no",
      k.aliases.map((a) => `${a.type}: ${a.name}`).join(", "),
    ]),
  )}\n`;
  for (const k of listing.kinds) {
    let about = terminalText(k.description);
    if (k.faultPoints.length > 0)
      about += ` Fault points: ${terminalText(k.faultPoints.join(", "))}.`;
    if (!k.samples) about += " No samples: idem kinds test cannot drill it.";
    // Wrapped before the name is coloured: the colour's codes take no width.
    const name = terminalText(k.name);
    out += `${textLine(`${name}: ${about}`).replace(name, color.bold(name))}\n`;
  }
  for (const u of listing.unavailable) {
    out += `${color.dim(`${u.name}: not available, needs the config's ${u.section} section (docs/kinds/${u.section}.md)`)}\n`;
  }
  return out;
}

const VERDICT_COLOR = {
  "exactly-once-in-effect": color.green,
  "can-end-uncertain": color.yellow,
  broken: color.red,
} as const;

/** `idem kinds test` for people: the checks, the crashes, the keys at the target, the findings, the verdict. */
export function printDrillReport(r: KindDrillReport): string {
  const from = r.builtIn ? "built-in" : (r.module ?? "");
  let out = `${color.bold(terminalText(r.kind))} (${terminalText(from)}), guarantee ${r.guarantee}\n`;
  const refused = r.samples.invalid.filter((s) => s.refused).length;
  out += `samples: ${refused} of ${r.samples.invalid.length} invalid refused; ${r.samples.valid} valid used\n`;
  if (r.checks.length > 0) {
    out += `${table(
      ["", "check", "key", "observed"],
      r.checks.map((c) => [
        c.ok ? styled(color.green, "ok") : styled(color.red, "FAIL"),
        c.check,
        c.key,
        c.observed,
      ]),
    )}\n`;
  }
  const killed = r.crashes.starts.filter((s) => s.killed).map((s) => s.point ?? "");
  const unreached = r.crashes.starts
    .filter((s) => s.point !== null && !s.killed)
    .map((s) => s.point ?? "");
  out += `crashes: ${r.crashes.outputs} outputs, ${r.crashes.starts.length} interpreter starts, killed at ${killed.join(", ") || "none"}`;
  if (unreached.length > 0) out += `; not reached: ${unreached.join(", ")}`;
  out += "\n";
  const c = r.counts;
  const found = r.countedBy === "scan" ? `${c.once} once` : `${c.present} present`;
  out += `at the target (by ${r.countedBy}): ${found}, ${c.missing} missing, ${c.duplicated} duplicated; runs: ${c.uncertain} uncertain, ${c.dead} dead\n`;
  const odd = r.keys.filter(
    (k) => k.atTarget === "missing" || k.atTarget === "duplicated" || k.run !== "done",
  );
  if (odd.length > 0) {
    out += `${table(
      ["key", "at target", "run", "ledger", "after a crash at"],
      odd.map((k) => [
        k.key,
        k.locations?.length ? `${k.atTarget} (${k.locations.join(", ")})` : k.atTarget,
        k.class ? `${k.run} (${k.class})` : k.run,
        k.ledger,
        k.after,
      ]),
    )}\n`;
  }
  for (const f of r.findings) {
    const weight =
      f.severity === "broken"
        ? color.red(f.severity)
        : f.severity === "uncertain"
          ? color.yellow(f.severity)
          : color.dim(f.severity);
    out += `${weight} ${f.code}: ${terminalText(f.message)}\n`;
  }
  out += `${color.dim(`not seen by the drill: ${r.cannotSee.join("; ")}`)}\n`;
  out += `guarantee: ${r.guarantee} declared, ${r.shown ?? "nothing"} shown\n`;
  out += `verdict: ${VERDICT_COLOR[r.verdict](terminalText(r.summary))}\n`;
  return out;
}
