import { existsSync } from "node:fs";
import {
  type DrilledKindEntry,
  type DrillInterpret,
  kindsOf,
  listKinds,
  loadKindModule,
  loadKinds,
  runKindDrill,
} from "@idem/core";
import { type Config, defaultConfig, isIdemError } from "@idem/schema";
import type { Command } from "commander";
import {
  CliError,
  configPath,
  EXIT,
  exitHolder,
  type GlobalOptions,
  loadConfigWithKinds,
  printJson,
} from "../context.js";
import { spawnIdem } from "../ops/supervisor.js";
import { printDrillReport, printKinds } from "../render/print-kinds.js";

/** `idem kinds`, imported when it runs (its options and help: commands/kinds.ts). */
export async function runKinds(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const config = await configForKinds(cmd.optsWithGlobals());
  const listing = listKinds(config, { withSchemas: opts.json === true });
  if (opts.json) printJson(listing);
  else process.stdout.write(printKinds(listing));
}

interface KindsTestOptions {
  options?: string;
  outputs?: string;
  kind?: string;
  keep?: boolean;
  json?: boolean;
  inProcess?: boolean;
}

/** The exit code of each verdict (docs/cli.md, idem kinds test). */
const VERDICT_EXIT = { "exactly-once-in-effect": 0, "can-end-uncertain": 1, broken: 3 } as const;

/** How long one interpreter start of the drill may take before it is killed (its PID). */
const START_LIMIT_MS = 10 * 60_000;

/** `idem kinds test <module>`, imported when it runs (its options and help: commands/kinds.ts). */
export async function runKindsTest(
  module: string,
  opts: KindsTestOptions,
  cmd: Command,
): Promise<void> {
  const config = await configForKinds(cmd.optsWithGlobals());
  const outputs = Number(opts.outputs ?? "6");
  if (!Number.isInteger(outputs) || outputs < 1 || outputs > 200)
    throw new CliError(
      `--outputs must be an integer from 1 to 200, got ${opts.outputs}`,
      EXIT.USAGE,
    );
  if (opts.inProcess) {
    const options = opts.options === undefined ? undefined : jsonOption(opts.options);
    const { runKindInProcess } = await import("./kinds-in-process.js");
    return runKindInProcess(module, config, { ...opts, options });
  }
  const kind = await drilledKind(module, config, opts);
  const report = await runKindDrill({
    config,
    kind,
    outputs,
    interpret: spawnInterpreter,
    keep: opts.keep === true,
    onProgress: opts.json ? undefined : (line) => process.stderr.write(`${line}\n`),
  }).catch((e: unknown) => {
    if (isIdemError(e, "INVALID_CONFIG") || isIdemError(e, "INVALID_INPUT"))
      throw new CliError(e.message, EXIT.USAGE);
    throw e;
  });
  // A drill the target kept from running (every broken finding a target error) exits 1, as docs/cli.md says.
  const broken = report.findings.filter((f) => f.severity === "broken");
  const couldNotRun = broken.length > 0 && broken.every((f) => f.code === "target-error");
  exitHolder.code = couldNotRun ? EXIT.FAILED : VERDICT_EXIT[report.verdict];
  if (opts.json) printJson(report);
  else process.stdout.write(printDrillReport(report));
}

/**
 * The config of `idem kinds`: the one named or found (its kinds loaded), else idem's defaults in
 * the working directory. Neither command touches the config's journal, so none is needed.
 */
async function configForKinds(options: GlobalOptions): Promise<Config> {
  const explicit = options.config !== undefined || process.env.IDEM_CONFIG !== undefined;
  if (explicit || existsSync(configPath(options))) return loadConfigWithKinds(options);
  const config = defaultConfig(process.cwd());
  await loadKinds(config);
  return config;
}

/**
 * The kind `<module>` names: a registered kind by its name (idem's own, or the config's with its
 * options), else the kind a module exports (`--kind` when it exports several), with `--options`
 * or the config's `kinds.<name>.options`.
 */
async function drilledKind(
  module: string,
  config: Config,
  opts: KindsTestOptions,
): Promise<DrilledKindEntry> {
  const options = opts.options === undefined ? undefined : jsonOption(opts.options);
  const registry = kindsOf(config);
  if (registry.get(module) || registry.sectionMissing(module) !== undefined) {
    if (registry.isBuiltIn(module) || registry.sectionMissing(module) !== undefined) {
      if (options !== undefined)
        throw new CliError(
          `--options: ${module} is one of idem's own kinds; its options are the config's`,
          EXIT.USAGE,
        );
      return { name: module, module: null };
    }
    const entry = config.kinds[module];
    return {
      name: module,
      module: entry?.module ?? module,
      options: options ?? entry?.options,
    };
  }
  const loaded = await loadKindModule(module, process.cwd()).catch((e: unknown) => {
    throw isIdemError(e) ? new CliError(e.message, EXIT.USAGE) : e;
  });
  const names = loaded.kinds.map((k) => k.name);
  const kind =
    opts.kind !== undefined
      ? loaded.kinds.find((k) => k.name === opts.kind)
      : loaded.kinds.length === 1
        ? loaded.kinds[0]
        : undefined;
  if (!kind)
    throw new CliError(
      opts.kind !== undefined
        ? `--kind: ${module} exports no kind ${opts.kind} (it exports ${names.join(", ")})`
        : `${module} exports several kinds (${names.join(", ")}): name one with --kind`,
      EXIT.USAGE,
    );
  if (registry.isBuiltIn(kind.name))
    throw new CliError(
      `${kind.name} is one of idem's own kinds; name yours in a namespace of your own`,
      EXIT.USAGE,
    );
  return {
    name: kind.name,
    module: loaded.module,
    options: options ?? config.kinds[kind.name]?.options,
  };
}

function jsonOption(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new CliError(`--options is not JSON: ${(e as Error).message}`, EXIT.USAGE);
  }
}

/** One `idem interpreter --once` of this same idem on the drill's config, armed or not. */
const spawnInterpreter: DrillInterpret = async ({ configFile, fault }) => {
  const lines: string[] = [];
  const child = spawnIdem("interpreter", ["interpreter", "--once", "--json"], {
    config: configFile,
    // The drill's own SQLite journal, whatever journal the environment names.
    env: { IDEM_FAULT: fault ?? "", IDEM_LOG_LEVEL: "warn", IDEM_JOURNAL_URL: "" },
    onLine: (_name, line, stream) => {
      if (stream === "stderr") lines.push(line);
      if (lines.length > 20) lines.shift();
    },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.child.kill("SIGKILL");
  }, START_LIMIT_MS);
  try {
    const { code, signal } = await child.exited;
    // A start killed by the limit is no kill at a fault point: the drill stops with its message.
    if (timedOut) lines.push(`killed after ${START_LIMIT_MS / 60_000} minutes`);
    return { code, signal: timedOut ? "timeout" : signal, stderr: lines.join("\n") };
  } finally {
    clearTimeout(timer);
  }
};
