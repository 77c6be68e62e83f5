// What a command loads before it does anything: the CLI runs in a child process with a module
// hook (`--import`) that records every module it loads, ES modules through the loader's `load`
// hook and CommonJS ones from require.cache at exit. The assertions name modules, never times: a
// static import that brings a command's implementation or a heavy client back into the start of
// `idem --help`, `idem status` or `idem submit` fails here. The built CLI (dist, as `npx idem` runs it) and the
// packed one (the esbuild bundle `npm pack` ships, made here into a temporary folder) are both run.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { RUN_STATES } from "@idem/journal";
import { LOG_FORMATS } from "@idem/runtime";
import { defaultConfig } from "@idem/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOG_FORMAT_NAMES, RUN_STATE_NAMES, STOP_GRACE_DEFAULT_S } from "../src/help-text.js";
import { cleanEnv, IDEM_BIN } from "./ops-helpers.js";

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const ROOT = resolve(CLI, "../..");

/** The hook: every module URL the loader loads, appended to the file the test names. */
const HOOKS = `import { appendFileSync } from "node:fs";
let out;
export function initialize(data) { out = data.out; }
export async function load(url, context, next) {
  appendFileSync(out, url + "\\n");
  return next(url, context);
}
`;

/** Registers the hook, and at exit adds the CommonJS modules (required from CommonJS, unseen by it). */
const RECORDER = `import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
const out = process.env.IDEM_TEST_MODULES;
register("./hooks.mjs", import.meta.url, { data: { out } });
const cache = createRequire(import.meta.url).cache;
process.on("exit", () => appendFileSync(out, Object.keys(cache).map((f) => f + "\\n").join("")));
`;

/**
 * The clients only a config that names them loads: pg for a PostgreSQL journal URL, the NATS client
 * for a NATS queue or a nats.publish target, simple-git for a remote repository.
 */
const CLIENTS = [
  "pg",
  "@nats-io/nats-core",
  "@nats-io/jetstream",
  "@nats-io/transport-node",
  "simple-git",
];

/** Clients and libraries `idem status` on an embedded SQLite journal has no use for. */
const NOT_FOR_STATUS = [
  ...CLIENTS,
  "@opentelemetry/api",
  "@opentelemetry/core",
  "@opentelemetry/sdk-trace-base",
  "@opentelemetry/exporter-trace-otlp-http",
  "hono",
  "@hono/node-server",
  "prom-client",
  "pino",
  "pino-pretty",
  "cli-progress",
  "cli-table3",
];

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "idem-start-up-"));
  writeFileSync(join(work, "hooks.mjs"), HOOKS);
  writeFileSync(join(work, "record.mjs"), RECORDER);
});
afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

/** What one run loaded: the files (absolute paths) and the third-party packages among them. */
interface Loaded {
  files: string[];
  packages: Set<string>;
}

let runs = 0;

/** Runs `node <entry> ...args` in `cwd` with the recorder; the command must exit 0. */
function loadedBy(entry: string, args: string[], cwd: string): Promise<Loaded> {
  const out = join(work, `modules-${++runs}.txt`);
  writeFileSync(out, "");
  const env: NodeJS.ProcessEnv = { ...cleanEnv(), IDEM_TEST_MODULES: out };
  delete env.NODE_OPTIONS;
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      ["--import", pathToFileURL(join(work, "record.mjs")).href, entry, ...args],
      { cwd, env, timeout: 60_000 },
      (error, _stdout, stderr) => {
        if (error) {
          fail(new Error(`idem ${args.join(" ")}: ${error.message}\n${stderr}`));
          return;
        }
        const files = [
          ...new Set(
            readFileSync(out, "utf8")
              .split("\n")
              .filter((l) => l.startsWith("file:") || l.startsWith("/"))
              .map((l) => (l.startsWith("file:") ? fileURLToPath(l) : l)),
          ),
        ];
        const packages = new Set(
          files.flatMap((f) => {
            const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(f);
            return m?.[1] ? [m[1]] : [];
          }),
        );
        done({ files, packages });
      },
    );
  });
}

/** The files of idem's own source tree (packages/*, apps/*) that were loaded, relative to the root. */
const ownFiles = (loaded: Loaded): string[] =>
  loaded.files
    .filter((f) => f.startsWith(`${ROOT}/`) && !f.includes("/node_modules/"))
    .map((f) => f.slice(ROOT.length + 1));

/**
 * A folder with `idem init` done (an embedded SQLite journal and local git, no NATS, no
 * telemetry) and a small output to submit, `output.json`.
 */
async function initialised(): Promise<string> {
  const dir = mkdtempSync(join(work, "ws-"));
  await loadedBy(IDEM_BIN, ["init"], dir);
  writeFileSync(
    join(dir, "output.json"),
    JSON.stringify({ jobId: "start-up-1", agent: "writer", summary: "a small job", effects: [] }),
  );
  return dir;
}

describe("the help texts the CLI spells out so that registering its commands imports no package", () => {
  it("name the run states of @idem/journal and the log formats of @idem/core", () => {
    expect([...RUN_STATE_NAMES]).toEqual([...RUN_STATES]);
    expect([...LOG_FORMAT_NAMES]).toEqual([...LOG_FORMATS]);
    expect(STOP_GRACE_DEFAULT_S * 1000).toBe(defaultConfig("/").queue.stopGraceMs);
  });
});

describe("the built CLI at start-up", () => {
  let status: Loaded;
  let submit: Loaded;
  beforeAll(async () => {
    const dir = await initialised();
    status = await loadedBy(IDEM_BIN, ["status", "--json"], dir);
    submit = await loadedBy(IDEM_BIN, ["submit", "output.json"], dir);
  });

  it("prints `idem --help` and a command's --help with commander and its own registration modules only", async () => {
    for (const args of [["--help"], ["submit", "--help"], ["dlq", "resolve", "--help"]]) {
      const loaded = await loadedBy(IDEM_BIN, args, work);
      expect([...loaded.packages], args.join(" ")).toEqual(["commander"]);
      const own = ownFiles(loaded);
      expect(own.length, args.join(" ")).toBeGreaterThan(0);
      expect(
        own.filter((f) => !/^apps\/cli\/(bin|dist)\//.test(f) || f.includes("/actions/")),
        args.join(" "),
      ).toEqual([]);
    }
  });

  it("runs `idem status --json` on an embedded SQLite journal without the other commands, telemetry, HTTP servers, loggers, progress bars or tables", () => {
    const own = ownFiles(status);
    expect(own.filter((f) => f.includes("/actions/"))).toEqual(["apps/cli/dist/actions/status.js"]);
    expect(own.filter((f) => /^apps\/(executor|interpreter|console)\//.test(f))).toEqual([]);
    expect(NOT_FOR_STATUS.filter((p) => status.packages.has(p))).toEqual([]);
    expect(status.packages.has("better-sqlite3")).toBe(true);
  });

  it("records with `idem submit` on an embedded SQLite journal without pg, the NATS client or simple-git", () => {
    // @idem/core's index imports the indexes of @idem/journal, @idem/nats and @idem/effects; the
    // PostgreSQL store, the NATS transport and the remote git import their client when first used.
    expect(ownFiles(submit).filter((f) => f.includes("/actions/"))).toEqual([
      "apps/cli/dist/actions/submit.js",
    ]);
    expect(CLIENTS.filter((p) => submit.packages.has(p))).toEqual([]);
    expect(submit.packages.has("better-sqlite3")).toBe(true);
  });
});

describe("the packed CLI at start-up", () => {
  let pack: string;
  let status: Loaded;
  let submit: Loaded;
  beforeAll(async () => {
    // Inside apps/cli, so that the bundle's third-party imports resolve from the workspace.
    pack = mkdtempSync(join(CLI, "dist", "start-up-"));
    await new Promise<void>((done, fail) => {
      execFile(
        process.execPath,
        [join(CLI, "scripts/bundle.mjs"), pack],
        { cwd: CLI, timeout: 120_000 },
        (error, _stdout, stderr) => (error ? fail(new Error(stderr || error.message)) : done()),
      );
    });
    writeFileSync(
      join(pack, "idem.mjs"),
      'const { main } = await import("./main.js");\nprocess.exitCode = await main(process.argv);\n',
    );
    const dir = await initialised();
    status = await loadedBy(join(pack, "idem.mjs"), ["status", "--json"], dir);
    submit = await loadedBy(join(pack, "idem.mjs"), ["submit", "output.json"], dir);
  }, 180_000);
  afterAll(() => {
    rmSync(pack, { recursive: true, force: true });
  });

  /** The sources bundled into the chunks that were loaded (absolute paths, from the source maps). */
  const bundledSources = (loaded: Loaded): string[] =>
    loaded.files
      .filter((f) => f.startsWith(`${pack}/`) && f.endsWith(".js"))
      .flatMap((f) =>
        (JSON.parse(readFileSync(`${f}.map`, "utf8")) as { sources: string[] }).sources.map((s) =>
          resolve(dirname(f), s),
        ),
      );

  it("prints `idem --help` with commander and the CLI's registration code only", async () => {
    const loaded = await loadedBy(join(pack, "idem.mjs"), ["--help"], work);
    expect([...loaded.packages]).toEqual(["commander"]);
    const sources = bundledSources(loaded);
    expect(sources).toContain(join(CLI, "src/main.ts"));
    const foreign = sources.filter(
      (s) => !s.startsWith(join(CLI, "src/")) || s.startsWith(join(CLI, "src/actions/")),
    );
    expect(foreign).toEqual([]);
  });

  it("runs `idem status --json` on an embedded SQLite journal without pg, NATS, git, telemetry or the other commands' code", () => {
    expect(NOT_FOR_STATUS.filter((p) => status.packages.has(p))).toEqual([]);
    const sources = bundledSources(status);
    expect(sources).toContain(join(CLI, "src/actions/status.ts"));
    const foreign = sources.filter((s) =>
      /\/node_modules\/@nats-io\/|\/apps\/(executor|interpreter|console)\/|\/apps\/cli\/src\/actions\/(?!status\.ts)/.test(
        s,
      ),
    );
    expect(foreign).toEqual([]);
  });

  it("records with `idem submit` on an embedded SQLite journal without pg, NATS or git: the bundled NATS client is a chunk of its own, imported on first use", () => {
    // pg and simple-git stay imports of node_modules; the @nats-io client is bundled, so its
    // sources must be in no chunk that was loaded.
    expect(CLIENTS.filter((p) => submit.packages.has(p))).toEqual([]);
    const sources = bundledSources(submit);
    expect(sources).toContain(join(CLI, "src/actions/submit.ts"));
    expect(sources.filter((s) => /\/node_modules\/@nats-io\//.test(s))).toEqual([]);
  });
});
