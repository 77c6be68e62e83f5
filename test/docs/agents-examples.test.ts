// docs/agents.md cannot drift: every JSON example in it marked with an `<!-- idem:... -->` comment
// (see agents-doc-examples.ts) is checked against what idem accepts today, and its links stay
// inside the repository.
import { existsSync, readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { checkRecordable } from "@idem/core";
import { BUILT_IN_KINDS } from "@idem/effects";
import { type Config, parseConfig, validateJob, validateOutput } from "@idem/schema";
import { describe, expect, it } from "vitest";
import {
  AGENTS_DOC,
  agentsDocExamples,
  EXAMPLE_MARKERS,
  REPO_ROOT,
  where,
} from "./agents-doc-examples.js";

const markdown = readFileSync(AGENTS_DOC, "utf8");
const doc = agentsDocExamples(markdown);

function exampleConfig(): Config {
  expect(doc.config, "docs/agents.md needs exactly one <!-- idem:config --> block").toHaveLength(1);
  const [{ block, value }] = doc.config as [(typeof doc.config)[number]];
  const r = parseConfig(value, { dir: REPO_ROOT });
  if (!r.ok) throw new Error(`${where(block)}: ${JSON.stringify(r.issues)}`);
  return r.config;
}

describe("docs/agents.md", () => {
  it("has marked examples: a config, a job, a command agent's stdout, outputs of every effect kind and refused outputs", () => {
    expect(doc.config).toHaveLength(1);
    expect(doc.jobs.length).toBeGreaterThan(0);
    expect(doc.stdouts.length).toBeGreaterThan(0);
    expect(doc.invalid.length).toBeGreaterThan(0);
    const kinds = new Set(
      doc.outputs.flatMap(({ value }) =>
        ((value as { effects?: { kind?: string }[] }).effects ?? []).map((f) => f.kind),
      ),
    );
    expect([...kinds].sort()).toEqual(BUILT_IN_KINDS.map((k) => k.name).sort());
    const unknown = doc.marked.filter(
      (b) => !(EXAMPLE_MARKERS as readonly string[]).includes(b.marker),
    );
    expect(unknown.map(where)).toEqual([]);
  });

  it("marks every JSON block that holds effects, so no example output goes unchecked", () => {
    const unmarked = doc.blocks.filter(
      (b) => b.marker === undefined && /"effects"\s*:\s*\[\s*\{/.test(b.text),
    );
    expect(unmarked.map(where)).toEqual([]);
  });

  it("gives jobs that validateJob accepts", () => {
    for (const { block, value } of doc.jobs) {
      const v = validateJob(value);
      expect(v.ok ? [] : v.issues, where(block)).toEqual([]);
    }
  });

  it("gives outputs that idem records: valid against the schema and the example config, every effect's own checks included", () => {
    const config = exampleConfig();
    expect(doc.outputs.length).toBeGreaterThan(0);
    for (const { block, value } of doc.outputs) {
      const schema = validateOutput(value, config);
      expect(schema.ok ? [] : schema.issues, where(block)).toEqual([]);
      const recordable = checkRecordable(value, config);
      expect(recordable.ok ? [] : recordable.issues, where(block)).toEqual([]);
    }
  });

  it("gives a command agent's stdout that is a valid output once the executor fills in jobId and agent", () => {
    const config = exampleConfig();
    const job = doc.jobs[0]?.value as { jobId: string; agent: string };
    for (const { block, value } of doc.stdouts) {
      const raw = value as Record<string, unknown>;
      expect(raw.jobId ?? job.jobId, where(block)).toBe(job.jobId);
      expect(raw.agent ?? job.agent, where(block)).toBe(job.agent);
      const v = checkRecordable({ ...raw, jobId: job.jobId, agent: job.agent }, config);
      expect(v.ok ? [] : v.issues, where(block)).toEqual([]);
    }
  });

  it("gives refused outputs that idem refuses, naming the field the docs name", () => {
    const config = exampleConfig();
    for (const { block, value } of doc.invalid) {
      expect(
        block.args.length,
        `${where(block)}: name the field(s) it is refused for`,
      ).toBeGreaterThan(0);
      const v = checkRecordable(value, config);
      expect(v.ok, `${where(block)} is accepted`).toBe(false);
      const paths = v.ok ? [] : v.issues.map((i) => i.path);
      for (const path of block.args) expect(paths, where(block)).toContain(path);
    }
  });

  it("links only to files inside the repository that exist", () => {
    const links = [...markdown.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1] as string);
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) {
      expect(link, "docs/agents.md links outside the repository").not.toMatch(/^[a-z]+:/i);
      const target = resolve(dirname(AGENTS_DOC), link);
      expect(relative(REPO_ROOT, target).startsWith(".."), `${link} leaves the repository`).toBe(
        false,
      );
      expect(existsSync(target), `${link} does not exist`).toBe(true);
    }
  });
});
