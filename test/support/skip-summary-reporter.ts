// Ends `vitest run` with what it skipped and why: one line per reason (the `skipUnless` reason of
// test/support/skip.ts, or a `ctx.skip(note)`), naming each test file with its count of skipped
// tests. Tests skipped with no reason (a `.skip`, an `.only` or a `-t` filter elsewhere) are counted
// on one line. Nothing is printed when nothing was skipped.
import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";

/** The skipUnless reason of a test, found on it or on the nearest suite above it. */
function reasonOf(test: TestCase): string | undefined {
  const result = test.result();
  if (result.state === "skipped" && result.note) return result.note;
  for (let at: TestCase | TestSuite | TestModule = test; at.type !== "module"; at = at.parent) {
    const reason = at.meta().skipReason;
    if (reason) return reason;
  }
  return undefined;
}

/**
 * The summary lines: `Skipped <n> tests, and why:`, then one line per reason with the files and
 * their counts (`  needs root: network namespaces - test/chaos/partition.int.test.ts (1)`).
 */
export function skipSummary(modules: ReadonlyArray<TestModule>): string[] {
  const byReason = new Map<string, Map<string, number>>();
  let unexplained = 0;
  let total = 0;
  for (const module of modules) {
    for (const test of module.children.allTests()) {
      if (test.result().state !== "skipped" || test.options.mode === "todo") continue;
      total++;
      const reason = reasonOf(test);
      if (reason === undefined) {
        unexplained++;
        continue;
      }
      const files = byReason.get(reason) ?? new Map<string, number>();
      files.set(module.relativeModuleId, (files.get(module.relativeModuleId) ?? 0) + 1);
      byReason.set(reason, files);
    }
  }
  if (total === 0) return [];
  const lines = [`Skipped ${total} test${total === 1 ? "" : "s"}, and why:`];
  for (const [reason, files] of [...byReason].sort(([a], [b]) => a.localeCompare(b))) {
    const where = [...files].map(([file, n]) => `${file} (${n})`).join(", ");
    lines.push(`  ${reason} - ${where}`);
  }
  if (unexplained > 0) {
    lines.push(`  no reason given (.skip, .only or a -t filter) - ${unexplained}`);
  }
  return lines;
}

/** The reporter `vitest.config.ts` adds after the default one. */
export default class SkipSummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const lines = skipSummary(modules);
    if (lines.length > 0) process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
