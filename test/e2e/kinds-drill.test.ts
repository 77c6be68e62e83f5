// `idem kinds` and the conformance drill (`idem kinds test`, `drillKind` of @idem/kit/drill) on the
// fixture kinds of test/fixtures/kinds: a correct one, three broken ones (each must be found,
// by the code of its finding) and an honest one that can end uncertain; and on file.write.
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { DRILL_FINDINGS, DRILL_VERDICTS, drillKind, type KindDrillReport } from "@idem/kit/drill";
import { startGitHubStandIn, tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { buildForTest, IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const FIXTURES = join(REPO_ROOT, "test/fixtures/kinds");
const run = promisify(execFile);

beforeAll(() => buildForTest("apps/cli"));

/** The environment of every child: nothing that names another config, journal or fault. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.IDEM_CONFIG;
  delete env.IDEM_FAULT;
  delete env.IDEM_JOURNAL_URL;
  return env;
}

async function idem(cwd: string, ...args: string[]) {
  const env = cleanEnv();
  try {
    const { stdout, stderr } = await run(process.execPath, [IDEM_BIN, ...args], {
      cwd,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

/** `idem kinds test <fixture> --json` on a fresh item folder; the exit code and the report. */
async function drillFixture(dir: string, fixture: string) {
  const r = await idem(
    dir,
    "kinds",
    "test",
    join(FIXTURES, fixture),
    "--options",
    JSON.stringify({ dir: join(dir, "items") }),
    "--outputs",
    "2",
    "--json",
  );
  expect(r.stdout, r.stderr).not.toBe("");
  return { code: r.code, report: JSON.parse(r.stdout) as KindDrillReport };
}

const codes = (r: KindDrillReport, severity?: string) =>
  r.findings.filter((f) => severity === undefined || f.severity === severity).map((f) => f.code);

describe("idem kinds test", () => {
  it.concurrent.each([
    [
      "a probe that always answers absent",
      "blind-probe-kind.mjs",
      DRILL_FINDINGS.DUPLICATED_AT_TARGET,
    ],
    [
      "an apply that is not safe to repeat",
      "repeat-apply-kind.mjs",
      DRILL_FINDINGS.SECOND_APPLY_CHANGED_TARGET,
    ],
    [
      "a probe that changes the target",
      "writing-probe-kind.mjs",
      DRILL_FINDINGS.PROBE_CHANGED_TARGET,
    ],
  ])("finds %s broken, naming the reason (exit 3)", async (_what, fixture, reason) => {
    await using dir = await tempDir("idem-drill-broken-");
    const { code, report } = await drillFixture(dir.path, fixture);
    expect(report.verdict).toBe(DRILL_VERDICTS.BROKEN);
    expect(codes(report, "broken")).toContain(reason);
    expect(code).toBe(3);
  });

  it.concurrent("finds an unprobeable kind can end uncertain, after which crashes (exit 1)", async () => {
    await using dir = await tempDir("idem-drill-uncertain-");
    const { code, report } = await drillFixture(dir.path, "unprobeable-kind.mjs");
    expect(report.verdict).toBe(DRILL_VERDICTS.CAN_END_UNCERTAIN);
    expect(codes(report, "broken")).toEqual([]);
    const uncertain = report.findings.find((f) => f.code === DRILL_FINDINGS.RUNS_ENDED_UNCERTAIN);
    expect(uncertain?.details?.points).toEqual(
      expect.arrayContaining(["interpreter.after-intent"]),
    );
    expect(report.counts.duplicated).toBe(0);
    expect(report.shown).toBe("uncertain-window");
    expect(code).toBe(1);
  });

  it.concurrent("holds a declared guarantee to account: exactly once in effect declared, uncertain shown (exit 3)", async () => {
    await using dir = await tempDir("idem-drill-overclaiming-");
    const { code, report } = await drillFixture(dir.path, "overclaiming-kind.mjs");
    expect(report.verdict).toBe(DRILL_VERDICTS.BROKEN);
    const held = report.findings.find((f) => f.code === DRILL_FINDINGS.GUARANTEE_NOT_SHOWN);
    expect(held?.details).toEqual({
      declared: "exactly-once-in-effect",
      shown: "uncertain-window",
    });
    expect(report.guarantee).toBe("exactly-once-in-effect");
    expect(report.shown).toBeNull();
    expect(report.cannotSee.length).toBeGreaterThan(0);
    expect(code).toBe(3);
  });

  it.concurrent("finds a correct kind exactly once in effect, killed inside its apply too (drillKind)", async () => {
    await using dir = await tempDir("idem-drill-item-");
    const report = await drillKind(join(FIXTURES, "item-kind.mjs"), {
      idem: IDEM_BIN,
      cwd: dir.path,
      env: cleanEnv(),
      options: { dir: join(dir.path, "items") },
      outputs: 2,
    });
    expect(report.findings).toEqual([]);
    expect(report.verdict).toBe(DRILL_VERDICTS.EXACTLY_ONCE);
    expect(report.samples.invalid.every((s) => s.refused)).toBe(true);
    expect(report.checks.every((c) => c.ok)).toBe(true);
    const killed = report.crashes.starts.filter((s) => s.killed).map((s) => s.point);
    expect(killed).toEqual(
      expect.arrayContaining([
        "interpreter.after-claim",
        "interpreter.after-intent",
        "interpreter.after-apply",
        "interpreter.after-effect-record",
        "interpreter.before-done",
        "fixture.after-create",
      ]),
    );
    expect(report.keys.every((k) => k.atTarget === "once" && k.run === "done")).toBe(true);
    expect(report.keys.length).toBe(report.crashes.outputs);
  });

  it.concurrent("finds file.write exactly once in effect on a root of the config", async () => {
    await using dir = await tempDir("idem-drill-file-");
    mkdirSync(join(dir.path, "out"));
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({ roots: { out: { path: "out" } } }),
    );
    const r = await idem(dir.path, "kinds", "test", "file.write", "--outputs", "2", "--json");
    const report = JSON.parse(r.stdout) as KindDrillReport;
    expect(report).toMatchObject({ kind: "file.write", builtIn: true, module: null });
    expect(codes(report, "broken")).toEqual([]);
    expect(report.verdict).toBe(DRILL_VERDICTS.EXACTLY_ONCE);
    expect(report.countedBy).toBe("probe");
    expect(codes(report)).toContain(DRILL_FINDINGS.DUPLICATES_NOT_COUNTED);
    expect(r.code).toBe(0);
  });

  it.concurrent("finds git.commit exactly once in effect on a repository of the config", async () => {
    await using dir = await tempDir("idem-drill-git-");
    const repo = join(dir.path, "site");
    mkdirSync(repo);
    for (const args of [
      ["init", "-q", "-b", "main"],
      [
        "-c",
        "user.email=t@localhost",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "initial",
      ],
    ])
      await run("git", args, { cwd: repo });
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({ repos: { site: { path: "site", branch: "main" } } }),
    );
    const r = await idem(dir.path, "kinds", "test", "git.commit", "--outputs", "2", "--json");
    const report = JSON.parse(r.stdout) as KindDrillReport;
    expect(report.findings).toEqual([]);
    expect(report.countedBy).toBe("scan");
    expect(report.verdict).toBe(DRILL_VERDICTS.EXACTLY_ONCE);
    expect(r.code).toBe(0);
  });

  it.concurrent("finds github.issue exactly once in effect against the GitHub stand-in", async () => {
    await using dir = await tempDir("idem-drill-github-");
    await using gh = await startGitHubStandIn();
    gh.createRepo({ owner: "acme", name: "app" });
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({
        github: {
          baseUrl: gh.url,
          tokenEnv: "DRILL_GITHUB_TOKEN",
          repos: { app: { owner: "acme", name: "app" } },
        },
      }),
    );
    const report = await drillKind("github.issue", {
      idem: IDEM_BIN,
      cwd: dir.path,
      outputs: 2,
      env: { ...cleanEnv(), DRILL_GITHUB_TOKEN: gh.token },
    });
    expect(report.findings).toEqual([]);
    expect(report.verdict).toBe(DRILL_VERDICTS.EXACTLY_ONCE);
  });

  it.concurrent("refuses a module that exports no kind, and options that are not JSON (exit 2)", async () => {
    await using dir = await tempDir("idem-drill-usage-");
    writeFileSync(join(dir.path, "nothing.mjs"), "export const x = 1;\n");
    const none = await idem(dir.path, "kinds", "test", "./nothing.mjs");
    expect(none.code).toBe(2);
    const bad = await idem(
      dir.path,
      "kinds",
      "test",
      join(FIXTURES, "item-kind.mjs"),
      "--options",
      "{",
    );
    expect(bad.code).toBe(2);
    const refused = await idem(
      dir.path,
      "kinds",
      "test",
      join(FIXTURES, "item-kind.mjs"),
      "--options",
      "{}",
    );
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain("kinds.fixture.item.options.dir");
  });
});

describe("idem kinds", () => {
  it("lists idem's kinds and the config's, with each spec's JSON Schema in --json", async () => {
    await using dir = await tempDir("idem-kinds-list-");
    writeFileSync(
      join(dir.path, "idem.config.json"),
      JSON.stringify({
        roots: { out: { path: "out" } },
        kinds: {
          "fixture.item": {
            module: join(FIXTURES, "item-kind.mjs"),
            options: { dir: join(dir.path, "items") },
          },
        },
      }),
    );
    const r = await idem(dir.path, "kinds", "--json");
    expect(r.code, r.stderr).toBe(0);
    const listing = JSON.parse(r.stdout) as {
      kinds: {
        name: string;
        builtIn: boolean;
        module: string | null;
        aliases: unknown[];
        scan: boolean;
        faultPoints: string[];
        schema: { properties: Record<string, unknown> };
      }[];
      unavailable: { name: string; section: string }[];
    };
    const item = listing.kinds.find((k) => k.name === "fixture.item");
    expect(item).toMatchObject({
      builtIn: false,
      module: join(FIXTURES, "item-kind.mjs"),
      scan: true,
      faultPoints: ["fixture.after-create"],
    });
    expect(Object.keys(item?.schema.properties ?? {})).toEqual(["kind", "text"]);
    const file = listing.kinds.find((k) => k.name === "file.write");
    expect(file).toMatchObject({ builtIn: true, aliases: [{ type: "root", name: "out" }] });
    expect(listing.unavailable).toContainEqual({ name: "github.issue", section: "github" });
    const table = await idem(dir.path, "kinds");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain("fixture.item");
  });
});
