import { runDoctor } from "@idem/core";
import type { Command } from "commander";
import { color, EXIT, exitHolder, loadConfigWithKinds, printJson, table } from "../context.js";
import { styled } from "../render/terminal-text.js";

/** `idem doctor`, imported when it runs (its options and help: commands/doctor.ts). */
export async function runDoctorCommand(
  opts: { network?: boolean; timeout?: number; json?: boolean; config?: string },
  cmd: Command,
): Promise<void> {
  const config = await loadConfigWithKinds(cmd.optsWithGlobals());
  const report = await runDoctor(config, {
    network: opts.network ?? false,
    ...(opts.timeout !== undefined && { timeoutMs: opts.timeout }),
  });
  const violations = report.findings.filter((f) => f.severity === "violation").length;
  const unavailable = report.findings.filter((f) => f.severity === "unavailable").length;
  // Damage or a broken invariant is 3; a server out of reach or a lock held (nothing damaged) is 1.
  if (violations > 0) exitHolder.code = EXIT.INVARIANT;
  else if (unavailable > 0) exitHolder.code = EXIT.FAILED;
  if (opts.json) {
    printJson({ config: config.file, ...report });
    return;
  }
  process.stdout.write(`config ${config.file ?? "(defaults, no file)"}\n`);
  if (report.findings.length > 0) {
    process.stdout.write(
      `${table(
        ["severity", "key", "finding", "what to do"],
        report.findings.map((f) => [
          styled(f.severity === "violation" ? color.red : color.yellow, f.severity),
          f.key,
          f.finding,
          f.fix,
        ]),
      )}\n`,
    );
  }
  if (report.approvalRules.length > 0)
    process.stdout.write(
      `approval rules (docs/approvals.md)\n${report.approvalRules.map((r) => `  ${r}\n`).join("")}`,
    );
  const warnings = report.findings.length - violations - unavailable;
  const verdict =
    violations > 0 ? color.red(`${violations} violation(s)`) : color.green("no violations");
  const held = unavailable > 0 ? `, ${color.yellow(`${unavailable} unavailable`)}` : "";
  process.stdout.write(
    `checked ${report.checked.join(", ")}: ${verdict}${held}, ${warnings} warning(s)\n`,
  );
}
