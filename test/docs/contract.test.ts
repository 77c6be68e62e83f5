// The contract lives in the repository: README.md and docs/ link only to files of the repository
// (no design file outside it, no "shared/" path), every relative link resolves, and the docs name
// every fault point, every top-level `idem` command and every failure class the code knows. A
// fault point, command or class added to the code without its documentation fails here.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { initialConfig } from "@idem/core";
import { BUILT_IN_KINDS } from "@idem/effects";
import { ERROR_CODES, FAILURE_CLASSES, FAULT_POINTS } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../apps/cli/src/main.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** README.md and every Markdown file under docs/, as repository-relative paths. */
function docFiles(): string[] {
  const found: string[] = ["README.md"];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(ROOT, dir)).sort()) {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) walk(path);
      else if (name.endsWith(".md")) found.push(path);
    }
  };
  walk("docs");
  return found;
}

const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

/** The text outside fenced code blocks and inline code spans, where links are links. */
function prose(markdown: string): string {
  return withoutCodeBlocks(markdown).replace(/`[^`\n]*`/g, "");
}

/** Markdown without its fenced code blocks (a heading keeps its inline code: GitHub's anchor does). */
function withoutCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** The targets of the inline links `[text](target)` and `<scheme:...>` autolinks of a file. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map(
    (m) => m[1] as string,
  );
  const refs = [...text.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1] as string);
  return [...targets, ...refs];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, "")
    .replace(/[^\p{L}\p{N} -]/gu, "")
    .replace(/ /g, "-");
}

function anchorsOf(path: string): Set<string> {
  const headings = [...withoutCodeBlocks(read(path)).matchAll(/^#{1,6}\s+(.+)$/gm)].map(
    (m) => m[1] as string,
  );
  return new Set(headings.map(slug));
}

/** What is wrong with one link of `from`, or undefined when it stays inside and resolves. */
function linkProblem(from: string, target: string): string | undefined {
  if (/^(https?|mailto):/i.test(target)) return undefined;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return "a link that is not a web address or a file";
  if (target.startsWith("/")) return "an absolute path";
  const [pathPart = "", anchor] = target.split("#");
  const file = pathPart === "" ? from : join(dirname(from), decodeURIComponent(pathPart));
  const abs = resolve(ROOT, file);
  const inside = relative(ROOT, abs);
  if (inside.startsWith(`..${sep}`) || inside === "..") return "outside the repository";
  if (!existsSync(abs)) return "no such file";
  if (anchor && abs.endsWith(".md") && !anchorsOf(inside).has(anchor)) return "no such heading";
  return undefined;
}

/** The body of the section that starts at `heading` in a Markdown text, up to the next heading. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) return "";
  const rest = markdown.slice(start + heading.length + 2);
  const next = rest.search(/^#{1,6} /m);
  return next < 0 ? rest : rest.slice(0, next);
}

/** The first cells of the Markdown table rows of a text, without their backticks. */
function tableKeys(markdown: string): Set<string> {
  const keys = [...markdown.matchAll(/^\|\s*`([^`]+)`\s*\|/gm)].map((m) => m[1] as string);
  return new Set(keys);
}

describe("the contract in the repository", () => {
  const files = docFiles();

  it("finds the README and the docs pages it checks", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/cli.md");
    expect(files).toContain("docs/concepts.md");
  });

  it("has no README or docs page that names a shared/ path", () => {
    const offending = files.filter((f) => read(f).includes("shared/"));
    expect(offending).toEqual([]);
  });

  it("has every relative link of the README and the docs resolve to a file inside the repository", () => {
    const problems: string[] = [];
    for (const file of files) {
      for (const target of linkTargets(read(file))) {
        const problem = linkProblem(file, target);
        if (problem) problems.push(`${file}: ${target}: ${problem}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("documents every fault point in a table of the docs", () => {
    const documented = new Set(files.flatMap((f) => [...tableKeys(read(f))]));
    const missing = Object.values(FAULT_POINTS).filter((p) => !documented.has(p));
    expect(missing).toEqual([]);
  });

  it("gives every top-level command of the CLI a section in docs/cli.md", () => {
    const commands = buildProgram().commands.map((c) => c.name());
    expect(commands.length).toBeGreaterThan(10);
    // `## idem dlq`, or `## idem journal copy` for a command with subcommands.
    const headings = [...read("docs/cli.md").matchAll(/^## idem (\S+)( \S+)?\s*$/gm)].map(
      (m) => m[1],
    );
    const missing = commands.filter((c) => !headings.includes(c));
    expect(missing).toEqual([]);
  });

  it("documents every error code with its class, HTTP status and exit code in docs/agents.md", () => {
    const table = section(read("docs/agents.md"), "### Error codes");
    const rows = [...table.matchAll(/^\|\s*`([A-Z_]+)`\s*\|([^|]+)\|([^|]+)\|([^|]+)\|/gm)];
    const documented = Object.fromEntries(
      rows.map((m) => [
        m[1],
        { class: m[2]?.trim(), http: Number(m[3]?.trim()), exit: Number(m[4]?.trim()) },
      ]),
    );
    expect(documented).toEqual(ERROR_CODES);
  });

  it("documents every failure class in the failure classes table of docs/concepts.md", () => {
    const table = tableKeys(section(read("docs/concepts.md"), "### Failure classes"));
    const missing = FAILURE_CLASSES.filter((c) => !table.has(c));
    expect(missing).toEqual([]);
  });
});

describe("what the docs state about the code", () => {
  it("gives the HTTP contract's version in docs/agents.md as docs/openapi.json has it", () => {
    const openapi = JSON.parse(read("docs/openapi.json")) as { info: { version: string } };
    const stated = /`info.version` is the version of this HTTP contract \(`([^`]+)`\)/.exec(
      read("docs/agents.md"),
    )?.[1];
    expect(stated).toBe(openapi.info.version);
  });

  it("lists every built-in kind under replay's --kind in docs/cli.md", () => {
    const line = /^- `--kind K\.\.\.`:[\s\S]*?(?=\n- )/m.exec(read("docs/cli.md"))?.[0] ?? "";
    const missing = BUILT_IN_KINDS.map((k) => k.name).filter((k) => !line.includes(`\`${k}\``));
    expect(missing).toEqual([]);
  });

  it("names each section idem init writes, in docs/cli.md and docs/configuration.md", () => {
    const sections = Object.keys(initialConfig());
    for (const doc of ["docs/cli.md", "docs/configuration.md"]) {
      const paragraph =
        read(doc)
          .split(/\n\s*\n/)
          .find((p) => p.includes("filled with their defaults")) ?? "";
      expect(
        sections.filter((s) => !paragraph.includes(`\`${s}\``)),
        doc,
      ).toEqual([]);
    }
  });

  it("says about how many packages npm install fetches (within 10% of the lockfile's, installed here)", () => {
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { link?: boolean }>;
    };
    const installed = Object.entries(lock.packages).filter(
      ([path, p]) => path.includes("node_modules/") && !p.link && existsSync(join(ROOT, path)),
    ).length;
    const stated = Number(/It fetches about (\d+) packages/.exec(read("README.md"))?.[1]);
    expect(Math.abs(stated - installed) / installed).toBeLessThanOrEqual(0.1);
  });
});
