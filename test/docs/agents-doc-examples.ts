// The JSON examples of docs/agents.md, read by their `<!-- idem:... -->` markers, for the suites
// that check or use them (test/docs, the packed-CLI install test).
//
//   <!-- idem:config -->           the config the examples' aliases need
//   <!-- idem:first-config -->     the config of the first command agent (A command agent)
//   <!-- idem:job -->              a Job
//   <!-- idem:output -->           a complete AgentOutput
//   <!-- idem:stdout -->           a command agent's stdout (jobId and agent left to the executor)
//   <!-- idem:invalid PATH... -->  an AgentOutput idem refuses, with an issue at each PATH
// and, in other languages (`fencedBlocks`): `<!-- idem:agent -->` the minimal agent (```js) and
// `<!-- idem:steps -->` the first agent's shell steps (```sh).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root directory. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** docs/agents.md. */
export const AGENTS_DOC = join(REPO_ROOT, "docs/agents.md");
/** The markers an example may carry. */
export const EXAMPLE_MARKERS = [
  "config",
  "first-config",
  "job",
  "stdout",
  "output",
  "invalid",
] as const;

/** One fenced ```json block of the doc. */
export interface JsonBlock {
  /** The `idem:` marker on the line before it, if any. */
  marker?: string;
  /** The words after the marker (the field paths of an `invalid` example). */
  args: string[];
  /** 1-based line of the marker (or of the fence when there is none), for messages. */
  line: number;
  text: string;
}

/** A marked block. */
export type Example = JsonBlock & { marker: string };

/** Every fenced ```json block of `markdown`, with its marker. @throws Error on an unclosed fence. */
export function jsonBlocks(markdown: string): JsonBlock[] {
  const lines = markdown.split("\n");
  const blocks: JsonBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== "```json") continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`docs/agents.md:${i + 1}: a json block is not closed`);
    const before = lines[i - 1]?.trim() ?? "";
    const m = /^<!--\s*idem:([a-z][a-z-]*)((?:\s+[^\s-]\S*)*)\s*-->$/.exec(before);
    blocks.push({
      ...(m ? { marker: m[1] } : {}),
      args: m?.[2]?.trim().split(/\s+/).filter(Boolean) ?? [],
      line: m ? i : i + 1,
      text: lines.slice(i + 1, end).join("\n"),
    });
    i = end;
  }
  return blocks;
}

/** Where an example is, for messages: `docs/agents.md:<line>`. */
export const where = (b: JsonBlock) => `docs/agents.md:${b.line}`;

/** The example's JSON. @throws Error naming the line when it is not JSON. */
export function parseExample(b: JsonBlock): unknown {
  try {
    return JSON.parse(b.text);
  } catch (err) {
    throw new Error(`${where(b)}: not JSON: ${(err as Error).message}`);
  }
}

/** The doc's marked examples by marker, parsed (each with its block). */
export function agentsDocExamples(markdown = readFileSync(AGENTS_DOC, "utf8")) {
  const blocks = jsonBlocks(markdown);
  const marked = blocks.filter((b): b is Example => b.marker !== undefined);
  const of = (marker: string) =>
    marked.filter((b) => b.marker === marker).map((b) => ({ block: b, value: parseExample(b) }));
  return {
    blocks,
    marked,
    config: of("config"),
    firstConfig: of("first-config"),
    jobs: of("job"),
    stdouts: of("stdout"),
    outputs: of("output"),
    invalid: of("invalid"),
  };
}

/** The text of every fenced block in `lang` (```sh, ```js) right after `<!-- idem:<marker> -->`. */
export function fencedBlocks(
  marker: string,
  lang: string,
  markdown = readFileSync(AGENTS_DOC, "utf8"),
): string[] {
  const lines = markdown.split("\n");
  const found: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i]?.trim() !== `\`\`\`${lang}`) continue;
    if (lines[i - 1]?.trim() !== `<!-- idem:${marker} -->`) continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`docs/agents.md:${i + 1}: a ${lang} block is not closed`);
    found.push(lines.slice(i + 1, end).join("\n"));
  }
  return found;
}
