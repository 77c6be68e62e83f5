// Doctor runs each registered kind's own check (its `doctor` hook, @idem/kit): findings as the kind
// gives them, a kind that throws a violation of that kind, and kinds without a check untouched.
import { defineEffectKind } from "@idem/kit";
import { parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runDoctor } from "../src/doctor/run-doctor.js";
import { loadKinds } from "../src/validate/load-kinds.js";

const kind = (
  name: string,
  doctor: (ctx: {
    options: unknown;
    timeoutMs: number;
    env(v: string): string;
  }) => Promise<unknown[]>,
) =>
  defineEffectKind({
    name,
    description: "a kind of the test's own",
    guarantee: "exactly-once-in-effect",
    spec: z.strictObject({ kind: z.literal(name) }),
    options: z.strictObject({ service: z.string(), tokenEnv: z.string() }),
    probe: async () => ({ status: "absent", detail: {} }),
    apply: async () => ({}),
    doctor: doctor as never,
  });

async function configWith(kinds: Record<string, ReturnType<typeof kind>>) {
  const raw = {
    journal: { path: ":memory:" },
    kinds: Object.fromEntries(
      Object.keys(kinds).map((name) => [
        name,
        { module: name, options: { service: `svc-${name}`, tokenEnv: "ACME_TOKEN" } },
      ]),
    ),
  };
  const r = parseConfig(raw, { dir: "/tmp" });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  await loadKinds(r.config, { importModule: async (name) => ({ default: kinds[name] }) });
  return r.config;
}

describe("doctor and the kinds' own checks", () => {
  it("shows what a kind's check finds, with its options, credentials and the check's bound", async () => {
    const seen: unknown[] = [];
    const config = await configWith({
      "acme.ticket": kind("acme.ticket", async (ctx) => {
        let token: string | undefined;
        try {
          token = ctx.env("ACME_TOKEN");
        } catch {}
        seen.push({ options: ctx.options, timeoutMs: ctx.timeoutMs, token });
        return [
          {
            severity: "violation",
            key: "kinds.acme.ticket.options.service",
            message: "svc-acme.ticket does not answer",
            fix: "start it",
          },
          { severity: "warning", key: "kinds.acme.ticket.options.service", message: "slow" },
        ];
      }),
    });
    const report = await runDoctor(config, { timeoutMs: 1234 });
    expect(seen).toEqual([
      {
        options: { service: "svc-acme.ticket", tokenEnv: "ACME_TOKEN" },
        timeoutMs: 1234,
        token: undefined,
      },
    ]);
    expect(report.checked).toContain("kind acme.ticket");
    expect(report.ok).toBe(false);
    expect(report.findings.filter((f) => f.key.startsWith("kinds.acme"))).toEqual([
      {
        severity: "violation",
        key: "kinds.acme.ticket.options.service",
        finding: "svc-acme.ticket does not answer",
        fix: "start it",
      },
      {
        severity: "warning",
        key: "kinds.acme.ticket.options.service",
        finding: "slow",
        fix: expect.any(String),
      },
    ]);
  });

  it("reports a kind whose check throws as a violation of that kind, and goes on with the others", async () => {
    const config = await configWith({
      "acme.broken": kind("acme.broken", async () => {
        throw new Error("cannot reach svc");
      }),
      "acme.fine": kind("acme.fine", async () => []),
    });
    const report = await runDoctor(config);
    expect(report.checked).toEqual(expect.arrayContaining(["kind acme.broken", "kind acme.fine"]));
    const mine = report.findings.filter((f) => f.key.startsWith("kinds.acme"));
    expect(mine).toMatchObject([{ severity: "violation", key: "kinds.acme.broken" }]);
    expect(mine[0]?.finding).toContain("cannot reach svc");
  });
});
