// docs/agents.md cannot drift: every JSON example in it marked with an `<!-- idem:... -->` comment
// is checked against what idem accepts today.
//
//   <!-- idem:config -->           the config the examples' aliases need (parseConfig)
//   <!-- idem:job -->              a Job (validateJob)
//   <!-- idem:output -->           a complete AgentOutput (checkRecordable: what submit records)
//   <!-- idem:stdout -->           a command agent's stdout, completed with the first job's
//                                  jobId and agent as the executor completes it
//   <!-- idem:invalid PATH... -->  an AgentOutput idem refuses, with an issue at each PATH
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRecordable } from "@idem/core";
import { type Config, EFFECT_KINDS, parseConfig, validateJob, validateOutput } from "@idem/schema";
import { describe, expect, it } from "vitest";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const DOC = join(REPO_ROOT, "docs/agents.md");

interface Example {
  marker: string;
  args: string[];
  /** 1-based line of the marker, for messages. */
  line: number;
  text: string;
}

/** Every fenced ```json block, with the `<!-- idem:... -->` marker on the line before it (if any). */
function jsonBlocks(
  markdown: string,
): { marker?: string; args: string[]; line: number; text: string }[] {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]?.trim() !== "```json") continue;
    const end = lines.indexOf("```", i + 1);
    if (end < 0) throw new Error(`docs/agents.md:${i + 1}: a json block is not closed`);
    const before = lines[i - 1]?.trim() ?? "";
    const m = /^<!--\s*idem:([a-z]+)((?:\s+[^\s-][^\s]*)*)\s*-->$/.exec(before);
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

const markdown = readFileSync(DOC, "utf8");
const blocks = jsonBlocks(markdown);
const examples = blocks.filter((b): b is Example => b.marker !== undefined);
const of = (marker: string) => examples.filter((e) => e.marker === marker);
const at = (e: Example) => `docs/agents.md:${e.line}`;

function parse(e: Example): unknown {
  try {
    return JSON.parse(e.text);
  } catch (err) {
    throw new Error(`${at(e)}: not JSON: ${(err as Error).message}`);
  }
}

function exampleConfig(): Config {
  const [block, ...more] = of("config");
  expect(block, "docs/agents.md has no <!-- idem:config --> block").toBeDefined();
  expect(more, "docs/agents.md has more than one <!-- idem:config --> block").toEqual([]);
  const r = parseConfig(parse(block as Example), { dir: REPO_ROOT });
  if (!r.ok) throw new Error(`${at(block as Example)}: ${JSON.stringify(r.issues)}`);
  return r.config;
}

describe("docs/agents.md", () => {
  it("has marked examples: a config, a job, a command agent's stdout, outputs of every effect kind and refused outputs", () => {
    expect(of("config")).toHaveLength(1);
    expect(of("job").length).toBeGreaterThan(0);
    expect(of("stdout").length).toBeGreaterThan(0);
    expect(of("invalid").length).toBeGreaterThan(0);
    const kinds = new Set(
      of("output").flatMap((e) =>
        ((parse(e) as { effects?: { kind?: string }[] }).effects ?? []).map((f) => f.kind),
      ),
    );
    expect([...kinds].sort()).toEqual([...EFFECT_KINDS].sort());
    const unknown = examples.filter(
      (e) => !["config", "job", "stdout", "output", "invalid"].includes(e.marker),
    );
    expect(unknown.map(at)).toEqual([]);
  });

  it("marks every JSON block that holds effects, so no example output goes unchecked", () => {
    const unmarked = blocks.filter(
      (b) => b.marker === undefined && /"effects"\s*:\s*\[\s*\{/.test(b.text),
    );
    expect(unmarked.map((b) => `docs/agents.md:${b.line}`)).toEqual([]);
  });

  it("gives jobs that validateJob accepts", () => {
    for (const e of of("job")) {
      const v = validateJob(parse(e));
      expect(v.ok ? [] : v.issues, at(e)).toEqual([]);
    }
  });

  it("gives outputs that idem records: valid against the schema and the example config, every effect's own checks included", () => {
    const config = exampleConfig();
    expect(of("output").length).toBeGreaterThan(0);
    for (const e of of("output")) {
      const raw = parse(e);
      const schema = validateOutput(raw, config);
      expect(schema.ok ? [] : schema.issues, at(e)).toEqual([]);
      const recordable = checkRecordable(raw, config);
      expect(recordable.ok ? [] : recordable.issues, at(e)).toEqual([]);
    }
  });

  it("gives a command agent's stdout that is a valid output once the executor fills in jobId and agent", () => {
    const config = exampleConfig();
    const job = parse(of("job")[0] as Example) as { jobId: string; agent: string };
    for (const e of of("stdout")) {
      const raw = parse(e) as Record<string, unknown>;
      expect(raw.jobId ?? job.jobId, at(e)).toBe(job.jobId);
      expect(raw.agent ?? job.agent, at(e)).toBe(job.agent);
      const v = checkRecordable({ ...raw, jobId: job.jobId, agent: job.agent }, config);
      expect(v.ok ? [] : v.issues, at(e)).toEqual([]);
    }
  });

  it("gives refused outputs that idem refuses, naming the field the docs name", () => {
    const config = exampleConfig();
    for (const e of of("invalid")) {
      expect(e.args.length, `${at(e)}: name the field(s) it is refused for`).toBeGreaterThan(0);
      const v = checkRecordable(parse(e), config);
      expect(v.ok, `${at(e)} is accepted`).toBe(false);
      const paths = v.ok ? [] : v.issues.map((i) => i.path);
      for (const path of e.args) expect(paths, at(e)).toContain(path);
    }
  });

  it("links only to files inside the repository that exist", () => {
    const links = [...markdown.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link, "docs/agents.md links outside the repository").not.toMatch(/^[a-z]+:/i);
      const target = resolve(dirname(DOC), link);
      expect(relative(REPO_ROOT, target).startsWith(".."), `${link} leaves the repository`).toBe(
        false,
      );
      expect(existsSync(target), `${link} does not exist`).toBe(true);
    }
  });
});
