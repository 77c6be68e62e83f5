import type { Command } from "commander";
import { color, configPath, exitHolder, loadConfig, useColor } from "../context.js";
import { supervise } from "../ops/supervisor.js";
import { graceOption, logFormatOption } from "../options.js";

const PREFIX_COLORS = [color.cyan, color.magenta, color.yellow] as const;

interface UpOptions {
  concurrency?: string;
  config?: string;
  logFormat?: string;
  console?: boolean;
  grace?: string;
}

/** How long up gives a child past the executor's stop grace before it SIGKILLs it. */
const KILL_MARGIN_MS = 30_000;

/** `idem up`, imported when it runs (its options and help: commands/up.ts). */
export async function runUp(opts: UpOptions, cmd: Command): Promise<void> {
  // The children's stderr is a pipe to this process: they log in the form this terminal wants.
  const format = logFormatOption(opts.logFormat);
  const globals = cmd.optsWithGlobals();
  const config = loadConfig(globals);
  // loadConfig found a file (no config at all is refused), so both children get the same one.
  const file = config.file ?? configPath(globals);
  const graceMs = graceOption(opts.grace) ?? config.queue.stopGraceMs;
  const graceS = graceMs / 1000;
  const names = opts.console ? ["executor", "interpreter", "console"] : ["executor", "interpreter"];
  const width = Math.max(...names.map((n) => n.length));
  const prefix = (name: string) => {
    const p = `${name.padEnd(width)} |`;
    const paint = PREFIX_COLORS[names.indexOf(name) % PREFIX_COLORS.length] ?? color.cyan;
    return useColor() ? paint(p) : p;
  };
  let fatal: ((code: number) => void) | undefined;
  const supervisor = supervise({
    processes: [
      {
        name: "executor",
        args: ["executor", "--log-format", format, "--grace", String(graceS)],
      },
      {
        name: "interpreter",
        args: ["interpreter", "--concurrency", opts.concurrency ?? "1", "--log-format", format],
      },
      ...(opts.console ? [{ name: "console", args: ["console", "--log-format", format] }] : []),
    ],
    config: file,
    onLine: (name, line, stream) =>
      (stream === "stdout" ? process.stdout : process.stderr).write(`${prefix(name)} ${line}\n`),
    onEvent: (message) => process.stderr.write(`${color.bold("up")} ${message}\n`),
    onFatal: (_name, code) => fatal?.(code),
    stopGraceMs: graceMs + KILL_MARGIN_MS,
  });
  process.stderr.write(
    `${color.bold("up")} config ${file}; Ctrl-C stops ${opts.console ? "all three" : "both"}\n`,
  );
  if (Object.keys(config.agents).length === 0) {
    process.stderr.write(
      `${color.bold("up")} no agents configured: the executor runs none and serves the submit API for agents elsewhere; the interpreter applies what they submit (configure agents.<name> to run agents here)\n`,
    );
  }
  await new Promise<void>((resolve) => {
    let signalled = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (signalled) {
        // A second Ctrl-C: the executor abandons its agents now (SIGTERM again is its signal for
        // that; from a terminal it has the SIGINT too). up still waits for both to end.
        process.stderr.write(
          `${color.bold("up")} ${signal} again: the executor kills its agents and gives their jobs back now\n`,
        );
        supervisor.signal("SIGTERM");
        return;
      }
      signalled = true;
      process.stderr.write(
        `${color.bold("up")} ${signal}: stopping ${opts.console ? "all three" : "both"}; the executor waits up to ${graceS} s for its agents in flight (--grace, queue.stopGraceMs), then kills them and gives their jobs back; Ctrl-C again to do that now\n`,
      );
      void supervisor.stop().then(resolve);
    };
    fatal = (code) => {
      exitHolder.code = code;
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      void supervisor.stop().then(resolve);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });
}
