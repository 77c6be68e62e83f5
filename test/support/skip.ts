// A suite or test that cannot run on every machine says why, in one place the end of `vitest run`
// prints (test/support/skip-summary-reporter.ts): `describe(name, skipUnless(root, "needs root:
// network namespaces"), () => …)` runs the suite where the condition holds and skips it elsewhere
// with that reason. Prefer it to `describe.skipIf`, whose skips say nothing.

import { execFileSync } from "node:child_process";

declare module "vitest" {
  interface TaskMeta {
    /** Why this suite or test was skipped on this machine (see skipUnless). */
    skipReason?: string;
  }
}

/** The options of a `describe` or `it`: none when `condition` holds, else skip with `reason`. */
export function skipUnless(
  condition: boolean,
  reason: string,
): { skip?: boolean; meta?: { skipReason: string } } {
  return condition ? {} : { skip: true, meta: { skipReason: reason } };
}

/** Whether `command` runs here (`<command> <versionFlag>` exits 0): a condition for `skipUnless`. */
export function runs(command: string, versionFlag = "--version"): boolean {
  try {
    execFileSync(command, [versionFlag], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
