// Adding a kind touches one folder (issue 46): a kind written in a temporary folder, next to a
// config that names it, is listed by `idem kinds`, checked by `idem doctor` (its own check of its
// options), selected by `idem replay --target` (the places it declares), scanned by `idem audit`
// and offered as an MCP tool, with no other file of idem changed. The real CLI, the real MCP SDK
// client over stdio, real files.
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { tempDir } from "@idem/testing";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => buildForTest("apps/cli"));

/** The kind: notes on boards (folders), one file per note holding its key; its own doctor and places. */
const KIND = `
import { isAbsolute, join, resolve } from "node:path";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { absent, defineEffectKind, present } from "@idem/kit";
import { z } from "zod";

const file = (dir, key) => join(dir, key.replace("/", "~") + ".note");

export default defineEffectKind({
  name: "acme.note",
  description: "Pins a note on a board (a folder of note files).",
  guarantee: "exactly-once-in-effect",
  spec: z.strictObject({ kind: z.literal("acme.note"), board: z.string(), text: z.string().min(1) }),
  options: z.strictObject({ boards: z.record(z.string(), z.string().min(1)) }),
  resolveOptions: (o, source) => ({
    boards: Object.fromEntries(
      Object.entries(o.boards).map(([a, p]) => [a, isAbsolute(p) ? p : resolve(source.dir, p)]),
    ),
  }),
  check(spec, ctx) {
    if (!Object.hasOwn(ctx.options.boards, spec.board)) ctx.issue("board", "is not a board");
  },
  targets: (spec) => ["board:" + spec.board],
  aliases: (spec) => [{ type: "target", name: spec.board }],
  knownAliases: (ctx) => Object.keys(ctx.options.boards).map((name) => ({ type: "target", name })),
  async doctor(ctx) {
    const findings = [];
    for (const [alias, dir] of Object.entries(ctx.options.boards)) {
      ctx.checking("board " + alias);
      if (!existsSync(dir))
        findings.push({
          severity: "violation",
          key: "kinds.acme.note.options.boards." + alias,
          message: dir + " does not exist",
          fix: "mkdir -p " + dir,
        });
    }
    return findings;
  },
  open: (ctx) => ctx.options.boards,
  probe: async (spec, call) =>
    existsSync(file(call.resource[spec.board], call.key)) ? present() : absent(),
  async apply(spec, call) {
    const dir = call.resource[spec.board];
    mkdirSync(dir, { recursive: true });
    if (!existsSync(file(dir, call.key))) writeFileSync(file(dir, call.key), call.key + "\\n" + spec.text);
    return { board: spec.board };
  },
  scan: {
    target: (spec) => "board:" + spec.board,
    async keys(spec, call) {
      const dir = call.resource[spec.board];
      const out = new Map();
      for (const f of existsSync(dir) ? readdirSync(dir) : [])
        out.set(readFileSync(join(dir, f), "utf8").split("\\n")[0], [f]);
      return out;
    },
    configured: (ctx) =>
      Object.keys(ctx.options.boards).map((board) => ({ kind: "acme.note", board, text: "-" })),
  },
});
`;

/** The environment of every child: nothing that names another config, journal or fault. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (
      v !== undefined &&
      !["IDEM_CONFIG", "IDEM_FAULT", "IDEM_JOURNAL_URL", "NATS_URL"].includes(k)
    )
      env[k] = v;
  return { ...env, NO_COLOR: "1" };
}

async function idem(cwd: string, ...args: string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env: childEnv(),
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

describe("a kind in a folder of its own", () => {
  it("is listed, checked by doctor, selected by replay's --target, scanned by audit and offered over MCP", async () => {
    await using dir = await tempDir("idem-kind-folder-");
    // The folder holds the kind and the config; its imports resolve as an installed project's.
    symlinkSync(join(REPO_ROOT, "node_modules"), join(dir.path, "node_modules"), "dir");
    writeFileSync(join(dir.path, "acme-note.mjs"), KIND);
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({
        journal: { path: ".idem/journal.db" },
        kinds: {
          "acme.note": {
            module: "./acme-note.mjs",
            options: { boards: { ops: "boards/ops", dev: "boards/dev" } },
          },
        },
      }),
    );
    const cwd = dir.path;

    const kinds = await idem(cwd, "kinds", "--json");
    expect(kinds.code, kinds.stderr).toBe(0);
    const listed = (JSON.parse(kinds.stdout) as { kinds: { name: string }[] }).kinds;
    expect(listed.find((k) => k.name === "acme.note")).toMatchObject({
      builtIn: false,
      aliases: [
        { type: "target", name: "ops" },
        { type: "target", name: "dev" },
      ],
      scan: true,
    });

    // doctor runs the kind's check: the boards do not exist yet (exit 3), then they do.
    const sick = await idem(cwd, "doctor", "--json");
    expect(sick.code).toBe(3);
    const report = JSON.parse(sick.stdout) as { checked: string[]; findings: { key: string }[] };
    expect(report.checked).toEqual(expect.arrayContaining(["board ops", "board dev"]));
    expect(report.findings.map((f) => f.key)).toEqual(
      expect.arrayContaining([
        "kinds.acme.note.options.boards.ops",
        "kinds.acme.note.options.boards.dev",
      ]),
    );
    for (const board of ["ops", "dev"]) mkdirSync(join(cwd, "boards", board), { recursive: true });
    const well = await idem(cwd, "doctor", "--json");
    expect(
      (JSON.parse(well.stdout) as { findings: { key: string }[] }).findings.filter((f) =>
        f.key.startsWith("kinds.acme.note"),
      ),
    ).toEqual([]);

    // One output with a note on each board, applied once.
    writeFileSync(
      join(cwd, "out.json"),
      JSON.stringify({
        jobId: "notes-1",
        agent: "writer",
        effects: [
          { kind: "acme.note", board: "ops", text: "deploy at noon" },
          { kind: "acme.note", board: "dev", text: "freeze" },
        ],
      }),
    );
    expect((await idem(cwd, "init", "--journal")).code).toBe(0);
    const submitted = await idem(cwd, "submit", "out.json", "--json");
    expect(submitted.code, submitted.stderr).toBe(0);
    const applied = await idem(cwd, "interpreter", "--once");
    expect(applied.code, applied.stderr).toBe(0);
    expect(readdirSync(join(cwd, "boards/ops"))).toEqual(["notes-1~0.note"]);

    // replay's --target knows the kind's places, and selects by them.
    const plan = async (...filter: string[]) => {
      const r = await idem(cwd, "replay", "--all", "--dry-run", "--json", ...filter);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { plan: { key: string; reason: string }[] }).plan;
    };
    expect(await plan("--target", "dev")).toEqual([
      expect.objectContaining({ key: "notes-1/1", reason: "present at board:dev" }),
    ]);
    expect((await plan("--target", "ops")).map((e) => e.key)).toEqual(["notes-1/0"]);
    const unknown = await idem(cwd, "replay", "--all", "--dry-run", "--target", "nope");
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("(ops, dev)");

    // audit scans each board the options configure, the journal's keys found there once.
    const audit = await idem(cwd, "audit", "--json");
    expect(audit.code, audit.stderr).toBe(0);
    const audited = JSON.parse(audit.stdout) as { targets: { target: string; keys: number }[] };
    expect(audited.targets).toEqual(
      expect.arrayContaining([
        { target: "board:ops", keys: 1 },
        { target: "board:dev", keys: 1 },
      ]),
    );

    // An agent's MCP session is offered the kind as a tool, described with its places.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [IDEM_BIN, "mcp", "--job", "notes-2", "--agent", "writer"],
      cwd,
      env: childEnv(),
      stderr: "ignore",
    });
    const client = new Client({ name: "kind-folder", version: "1" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name === "effect_acme_note");
      expect(tool?.description).toContain("Configured here: target ops, dev.");
      expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(["board", "text"]);
    } finally {
      await client.close();
    }
  });
});
