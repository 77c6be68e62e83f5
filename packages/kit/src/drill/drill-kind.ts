// @idem/kit/drill: the conformance drill for a test runner, by the installed idem command line
// (`idem kinds test --json`), so that @idem/kit itself depends on nothing of idem but its schema.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { IdemError } from "@idem/schema";
import type { KindDrillReport } from "../drill-report.js";

/** What `drillKind` passes to `idem kinds test`, and how it finds and runs idem. */
export interface DrillKindOptions {
  /** The config whose targets the drill acts on (`--config`); its journal is never touched. */
  config?: string;
  /** The kind's options (`--options`), instead of the config's `kinds.<name>.options`. */
  options?: unknown;
  /** Outputs of the crash phase (`--outputs`, default idem's). */
  outputs?: number;
  /** The kind to drill when the module exports several (`--kind`). */
  kind?: string;
  /**
   * The idem command: a path to its bin script (run with this Node) or a command on the PATH.
   * Default: the bin of `@idem/cli` installed beside the working directory, else a
   * `node_modules/.bin/idem` there or in a folder above, else `idem` on the PATH.
   */
  idem?: string;
  cwd?: string;
  /** The environment of idem and so of the kind (its credentials); default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** How long the whole drill may take before idem is killed (default 15 minutes). */
  timeoutMs?: number;
}

/**
 * Runs the conformance drill on the kind a module exports (a path, a file URL or a package name;
 * or a registered kind's name) with the installed idem, and answers its report: check
 * `report.verdict` against DRILL_VERDICTS and `report.findings[].code` against DRILL_FINDINGS.
 * A broken or uncertain kind is an answer, not an error.
 * @throws IdemError INVALID_CONFIG when idem refuses the module, its options or the config (exit
 *   2, its message); UNAVAILABLE when idem cannot be started, is killed by the timeout or answers
 *   no report.
 */
export async function drillKind(
  module: string | URL,
  options: DrillKindOptions = {},
): Promise<KindDrillReport> {
  const cwd = options.cwd ?? process.cwd();
  const target = module instanceof URL ? fileURLToPath(module) : module;
  const args = ["kinds", "test", target, "--json"];
  if (options.config !== undefined) args.push("--config", options.config);
  if (options.options !== undefined) args.push("--options", JSON.stringify(options.options));
  if (options.outputs !== undefined) args.push("--outputs", String(options.outputs));
  if (options.kind !== undefined) args.push("--kind", options.kind);
  const idem = options.idem ?? installedIdem(cwd);
  const [command, argv] = /\.[cm]?js$/.test(idem)
    ? [process.execPath, [idem, ...args]]
    : [idem, args];
  const { code, stdout, stderr } = await run(
    command,
    argv,
    cwd,
    options.env ?? process.env,
    options.timeoutMs ?? 15 * 60_000,
  );
  if (code === 2)
    throw new IdemError("INVALID_CONFIG", `idem kinds test refused: ${lastLine(stderr)}`);
  try {
    const report = JSON.parse(stdout) as KindDrillReport;
    if (typeof report?.verdict === "string") return report;
  } catch {
    // Not a report: the error below says what idem said instead.
  }
  throw new IdemError(
    "UNAVAILABLE",
    `idem kinds test answered no report (exit ${code}): ${lastLine(stderr)}`,
  );
}

/**
 * The bin of `@idem/cli` resolved from `cwd`, else a `node_modules/.bin/idem` in `cwd` or a folder
 * above it (an author project's local install), else the `idem` on the PATH (a global install).
 */
function installedIdem(cwd: string): string {
  try {
    const bin = createRequire(join(cwd, "package.json")).resolve("@idem/cli/bin/idem.js");
    if (existsSync(bin)) return bin;
  } catch {
    // Not resolvable beside cwd: a linked bin, else the PATH's idem.
  }
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const linked = join(dir, "node_modules", ".bin", "idem");
    if (existsSync(linked)) return linked;
    if (dirname(dir) === dir) return "idem";
  }
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", (e) => {
      clearTimeout(timer);
      reject(new IdemError("UNAVAILABLE", `cannot start ${command}: ${e.message}`, { cause: e }));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const lastLine = (text: string): string =>
  text.trim().split("\n").at(-1)?.slice(0, 500) ?? "(nothing on stderr)";

export type { DrillFinding, DrillVerdict, KindDrillReport } from "../drill-report.js";
export { DRILL_FINDINGS, DRILL_VERDICTS } from "../drill-report.js";
