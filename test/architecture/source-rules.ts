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
  {
    name: "no-export-star",
    comment:
      "a public surface is chosen, not listed: every index names what it exports (`export { a, b } from`), never `export *` (issue 46)",
    in: /^(packages|apps)\//,
    pattern: /^\s*export\s+(type\s+)?\*/m,
  },
];

/**
 * The names of idem's own effect kinds, read from their folders (`name: "git.commit"` in each
 * `packages/effects/src/kinds/<folder>/*-kind.ts`), with the folder that owns each.
 */
export function builtInKindNames(root: string): Map<string, string> {
  const base = "packages/effects/src/kinds";
  const out = new Map<string, string>();
  let folders: string[] = [];
  try {
    folders = readdirSync(join(root, base), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch {
    return out;
  }
  for (const folder of folders) {
    for (const f of readdirSync(join(root, base, folder))) {
      if (!f.endsWith("-kind.ts")) continue;
      const text = readFileSync(join(root, base, folder, f), "utf8");
      for (const m of text.matchAll(/\bname:\s*"([a-z][a-z0-9_.-]*\.[a-z0-9_.-]+)"/g))
        out.set(m[1] as string, `${base}/${folder}/`);
    }
  }
  return out;
}

/**
 * Every place outside a kind's folder that tests a kind's name (`=== "git.commit"`, `case
 * "file.write":`): whatever idem must know of a kind, it asks the kind (its registry entry).
 */
export function kindNameTests(root: string): KnownViolation[] {
  const names = builtInKindNames(root);
  if (names.size === 0) return [];
  const alternatives = [...names.keys()].map((n) => n.replace(/\./g, "\\.")).join("|");
  const test = new RegExp(
    `(?:[!=]==?\\s*"(${alternatives})")|(?:"(${alternatives})"\\s*[!=]==?)|(?:case\\s+"(${alternatives})"\\s*:)`,
  );
  const out: KnownViolation[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.[cm]?ts$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) {
        const m = test.exec(stripComments(readFileSync(join(root, path), "utf8")));
        if (!m) continue;
        const name = (m[1] ?? m[2] ?? m[3]) as string;
        if (path.startsWith(names.get(name) as string)) continue;
        out.push({ rule: "kind-name-tested-outside-its-folder", from: path, to: name });
      }
    }
  };
  for (const folder of sourceFolders(root)) walk(folder);
  return out;
}

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

/**
 * The parts of idem that know no kind (issue 46, "the host knows no kind"): the vocabulary, the
 * domain, and the effects host (the loop over the kinds, the registry, the façade). What they must
 * know of a kind they ask it (its options, places, targets, doctor, hint); idem's own kinds' folders
 * (and the git engine they share) are the kinds' own.
 */
export const KIND_AGNOSTIC =
  /^packages\/(schema\/src|core\/src|effects\/src\/(create-effects|effects|static-checks)\.ts|effects\/src\/registry)\b/;

/**
 * The fields idem's first kinds kept in idem's own config and records, which no kind-agnostic part
 * may name: a config section of a kind (`repos`, `roots`, `publish`, `http.targets`) or the git
 * probe's `base`, read as a property (`.repos`, but not a call such as `publisher.publish(` nor a
 * word of a name such as `job.publish-failed`) or written as a key (`repos:`, `"repos"`).
 */
const KIND_FIELDS = ["repos", "roots", "publish", "base"];
const KIND_FIELD = new RegExp(
  [
    `\\.(${KIND_FIELDS.join("|")})\\b(?!\\s*\\(|-)`,
    `(^|[{,\\s])(${KIND_FIELDS.join("|")})\\??\\s*:(?!:)`,
    `["'\`](${KIND_FIELDS.join("|")}|http\\.targets)["'\`.]`,
  ].join("|"),
  "m",
);

/**
 * Every kind-agnostic file (KIND_AGNOSTIC) that names a built-in kind (its name in quotes) or a
 * kind's field (KIND_FIELDS): the host knows no kind.
 */
export function kindVocabularyInHost(root: string): KnownViolation[] {
  const names = [...builtInKindNames(root).keys()].map((n) => n.replace(/\./g, "\\."));
  const named = names.length > 0 ? new RegExp(`["'\`](${names.join("|")})["'\`]`) : undefined;
  const out: KnownViolation[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.[cm]?ts$/.test(entry.name) && !/\.d\.[cm]?ts$/.test(entry.name)) {
        if (!KIND_AGNOSTIC.test(path)) continue;
        const text = stripComments(readFileSync(join(root, path), "utf8"));
        const kind = named?.exec(text);
        if (kind) out.push({ rule: "kind-named-in-the-host", from: path, to: kind[1] as string });
        const field = KIND_FIELD.exec(text);
        if (field) {
          const word = field.slice(1).find((g) => g !== undefined && /^[a-z.]+$/.test(g)) ?? "";
          out.push({ rule: "kind-field-in-the-host", from: path, to: word });
        }
      }
    }
  };
  for (const folder of sourceFolders(root)) walk(folder);
  return out;
}
