import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { KnownViolation } from "./known-during-refactor.js";
import { sourceFolders } from "./source-graph.js";

/**
 * Rules on what the source says, not on what it imports: a call that only one module may make.
 * Each names the files allowed to match (a regular expression over the path from the root) and
 * the code the rule looks for; comments are stripped before the match.
 */
export interface SourceRule {
  name: string;
  comment: string;
  /** Paths the rule applies to. */
  in: RegExp;
  /** Paths the rule allows the match in. */
  allowedIn?: RegExp;
  pattern: RegExp;
}

export const SOURCE_RULES: SourceRule[] = [
  {
    name: "record-only-through-core",
    comment:
      "an output becomes a record only through @idem/core's recordOutput (packages/core/src/record/), which checks it and computes its targets; the journal's own adapters implement outputs.record",
    in: /^(packages|apps)\//,
    allowedIn: /^packages\/(core\/src\/record|journal\/src)\//,
    pattern: /\boutputs\s*\.\s*record\s*\(/,
  },
  {
    name: "no-ledger-writes-in-interpreter-app",
    comment:
      "the interpreter app keeps the process (claim loop, pool, signals, metrics); the ledger's writes around an effect belong to @idem/core's interpretation (packages/core/src/interpret/)",
    in: /^apps\/interpreter\//,
    pattern: /\bledger\s*\.\s*(intend|settle|resolve)\s*\(/,
  },
];

/** Removes // and /* comments (not inside strings: good enough for these patterns). */
function stripComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** Every match of SOURCE_RULES in the src/ of every package and app under `root`. */
export function sourceViolations(
  root: string,
  rules: SourceRule[] = SOURCE_RULES,
): KnownViolation[] {
  const out: KnownViolation[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.[cm]?ts$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) {
        const applies = rules.filter((r) => r.in.test(path) && !r.allowedIn?.test(path));
        if (applies.length === 0) continue;
        const text = stripComments(readFileSync(join(root, path), "utf8"));
        for (const r of applies) if (r.pattern.test(text)) out.push({ rule: r.name, from: path });
      }
    }
  };
  for (const folder of sourceFolders(root)) walk(folder);
  return out;
}
