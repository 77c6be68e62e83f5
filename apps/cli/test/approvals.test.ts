import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitSpec, type OpsFixture, opsFixture } from "./ops-fixture.js";
import { gitIn, idem } from "./ops-helpers.js";

let fx: OpsFixture;
beforeEach(async () => {
  fx = await opsFixture({ approvals: { rules: [{ name: "site", kind: "git.commit" }] } });
});
afterEach(async () => {
  await fx.close();
});

const run = (...args: string[]) => idem([...args, "--config", fx.ws.config]);
const commitsWith = (text: string) =>
  gitIn(fx.repoDir, "log", "--format=%s", "main")
    .split("\n")
    .filter((s) => s.includes(text)).length;

describe("idem approve and idem reject", () => {
  it("approve applies the awaited commit once; reject ends the run; show names who, when, why", async () => {
    await fx.record("yes", [commitSpec("yes.txt", "y", "commit yes")]);
    await fx.record("no", [commitSpec("no.txt", "n", "commit no")]);
    await fx.interpret();

    const doctor = JSON.parse((await run("doctor", "--json")).stdout);
    expect(doctor.approvalRules).toEqual(["site: kind git.commit"]);
    const status = await run("status", "--json");
    expect(status.code, status.stderr).toBe(0);
    const s = JSON.parse(status.stdout);
    expect(s.runs.awaiting).toBe(2);
    expect(s.awaiting.map((a: { jobId: string }) => a.jobId)).toEqual(["yes", "no"]);
    const ls = await run("ls", "--state", "awaiting", "--json");
    expect(
      JSON.parse(ls.stdout)
        .map((r: { jobId: string }) => r.jobId)
        .sort(),
    ).toEqual(["no", "yes"]);
    expect((await run("jobs")).stdout).toContain("awaiting approval");

    // No reason: a usage error, nothing decided.
    expect((await run("approve", "yes")).code).toBe(2);
    expect((await run("approve", "yes", "--effects", "x", "--reason", "r")).code).toBe(2);
    // An effect that is not awaited: refused (exit 1), nothing decided.
    expect((await run("approve", "yes", "--effects", "3", "--reason", "r")).code).toBe(1);
    expect((await fx.journal.runs.latest("yes"))?.state).toBe("awaiting");

    const ok = await run(
      "approve",
      "yes",
      "--reason",
      "reviewed the diff",
      "--as",
      "ana",
      "--json",
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      decision: "approved",
      actor: "ana",
      effects: [0],
    });
    const no = await run("reject", "no", "--reason", "wrong branch", "--as", "bo");
    expect(no.code, no.stderr).toBe(0);
    // A second decision: the run is no longer awaiting (exit 1).
    expect((await run("approve", "no", "--reason", "changed my mind")).code).toBe(1);

    await fx.interpret();
    expect(commitsWith("commit yes")).toBe(1);
    expect(commitsWith("commit no")).toBe(0);
    expect(await fx.journal.runs.latest("no")).toMatchObject({ state: "dead", class: "rejected" });

    const shown = await run("show", "no", "--json");
    const steps = JSON.parse(shown.stdout).approvals;
    expect(steps.map((a: { step: string }) => a.step)).toEqual(["requested", "rejected"]);
    expect(steps[1]).toMatchObject({ actor: "bo", reason: "wrong branch" });
    const audit = await run("audit", "--json");
    expect(audit.code, audit.stdout).toBe(0);
    expect(
      JSON.parse(audit.stdout).approvals.map(
        (a: { jobId: string; step: string; actor: string }) => [a.jobId, a.step, a.actor],
      ),
    ).toEqual([
      ["yes", "approved", "ana"],
      ["no", "rejected", "bo"],
    ]);
    const text = (await run("show", "yes")).stdout;
    expect(text).toContain("approvals");
    expect(text).toMatch(/approved +│ ana/);
    const yes = JSON.parse((await run("show", "yes", "--json")).stdout).approvals;
    expect(yes[1]).toMatchObject({ step: "approved", actor: "ana", reason: "reviewed the diff" });
  });
});
