import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture;
beforeEach(async () => {
  fx = await opsFixture({ interpreter: { pollMs: 20, backoffMs: [20], maxAttempts: 1 } });
});
afterEach(async () => {
  await fx.close();
});

/** A patch of README.md whose context the repo does not have: it fails on a conflict. */
const PATCH = [
  "--- a/README.md",
  "+++ b/README.md",
  "@@ -1 +1 @@",
  "-# other",
  "+# patched",
  "",
].join("\n");

async function deadOnConflict(): Promise<void> {
  await fx.record("patch-1", [
    { kind: "git.patch", repo: "site", message: "patch it", patch: PATCH },
  ]);
  await fx.interpret();
  expect((await fx.journal.runs.latest("patch-1"))?.state).toBe("dead");
}

const resolve = (...args: string[]) =>
  idem([
    "dlq",
    "resolve",
    "patch-1",
    "--reason",
    "looked at it",
    ...args,
    "--config",
    fx.ws.config,
  ]);

// The decision itself (which failure classes may be resolved how) is tested on @idem/core; these
// tests are the command's wiring: it hands the targets to core, so --applied is probed.
describe("idem dlq resolve", () => {
  it("refuses --applied for an effect that failed on a conflict and is not at its target", async () => {
    await deadOnConflict();
    const r = await resolve("--applied");
    expect(r.code, r.stdout).toBe(1);
    expect((await fx.journal.runs.latest("patch-1"))?.state).toBe("dead");
  });

  it("records --applied as present when the probe finds the change at its target; the audit then agrees", async () => {
    await deadOnConflict();
    // A person makes the change by hand.
    writeFileSync(join(fx.repoDir, "README.md"), "# patched\n");
    gitIn(fx.repoDir, "commit", "-qam", "by hand");
    const r = await resolve("--applied", "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ decision: "applied", state: "present" });
    await fx.interpret();
    expect((await fx.journal.runs.latest("patch-1"))?.state).toBe("done");
    const audit = await idem(["audit", "--json", "--config", fx.ws.config]);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it("settles it with --skipped, and the audit then agrees", async () => {
    await deadOnConflict();
    const r = await resolve("--skipped");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/: skipped \(by /);
    await fx.interpret();
    const audit = await idem(["audit", "--json", "--config", fx.ws.config]);
    expect(audit.code, audit.stdout).toBe(0);
  });
});
