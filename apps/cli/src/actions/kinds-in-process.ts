import { kindsOf, loadKindModule } from "@idem/core";
import type { AnyEffectKind } from "@idem/kit";
import { type KindTestReport, testKind } from "@idem/kit/test";
import { type Config, isIdemError } from "@idem/schema";
import { CliError, color, EXIT, exitHolder, printJson } from "../context.js";
import { terminalText } from "../render/terminal-text.js";

/**
 * `idem kinds test <module> --in-process`: @idem/kit/test's tester on the kind (a registered name,
 * or a module), with its options from `--options` or the config: exit 0 when nothing is broken, 3
 * when something is. Its target is the one the options name, as for the drill.
 */
export async function runKindInProcess(
  module: string,
  config: Config,
  opts: { options?: unknown; kind?: string; json?: boolean },
): Promise<void> {
  const registry = kindsOf(config);
  let kind: AnyEffectKind | undefined = registry.get(module);
  let raw: unknown = opts.options;
  let at: string | undefined;
  if (kind) {
    if (raw === undefined) ({ raw, at } = registry.source(module) ?? { raw: undefined });
  } else {
    const loaded = await loadKindModule(module, process.cwd()).catch((e: unknown) => {
      throw isIdemError(e) ? new CliError(e.message, EXIT.USAGE) : e;
    });
    kind =
      opts.kind === undefined ? loaded.kinds[0] : loaded.kinds.find((k) => k.name === opts.kind);
    if (!kind || (opts.kind === undefined && loaded.kinds.length > 1))
      throw new CliError(
        `${module}: name one of ${loaded.kinds.map((k) => k.name).join(", ")} with --kind`,
        EXIT.USAGE,
      );
    raw ??= config.kinds[kind.name]?.options;
  }
  const report = await testKind(kind, {
    options: raw,
    dir: config.dir,
    ...(at ? { optionsAt: at } : {}),
    limits: registry.limits,
    ...(registry.nats ? { nats: registry.nats } : {}),
  }).catch((e: unknown) => {
    throw isIdemError(e, "INVALID_CONFIG") ? new CliError(e.message, EXIT.USAGE) : e;
  });
  exitHolder.code = report.ok ? EXIT.OK : EXIT.INVARIANT;
  if (opts.json) printJson(report);
  else process.stdout.write(printInProcess(report));
}

function printInProcess(r: KindTestReport): string {
  let out = `${color.bold(terminalText(r.kind))} in process, guarantee ${r.guarantee}\n`;
  out += `requests of one probe and apply: ${r.requests.join(", ") || "none through ctx.fetch"}; fault points: ${r.faultCalls.join(", ") || "none"}\n`;
  const failed = r.checks.filter((c) => !c.ok).length + r.scenarios.filter((s) => !s.ok).length;
  out += `${r.checks.length} checks, ${r.scenarios.length} throws injected, ${failed} not ok\n`;
  for (const s of r.scenarios.filter((x) => !x.ok))
    out += `  ${terminalText(s.at)}: ${s.observed}, ${s.writes} writes\n`;
  for (const f of r.findings) out += `${f.severity} ${f.code}: ${terminalText(f.message)}\n`;
  out += `${color.dim(`not seen in process: ${r.cannotSee.join("; ")}`)}\n`;
  out += r.ok ? `${color.green("ok: nothing broken")}\n` : `${color.red("broken")}\n`;
  return out;
}
