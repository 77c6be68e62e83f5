import { AssertionError } from "node:assert";
import { describe, expect, it } from "vitest";
import { fail } from "../src/index.js";
import { assertKind, KIND_TEST_FINDINGS, testKind } from "../src/tester/index.js";
import { ticketKind, type Variant } from "./support/ticket-kinds.js";
import { startTicketStandIn } from "./support/ticket-stand-in.js";

async function report(variant: Variant) {
  await using service = await startTicketStandIn();
  const r = await testKind(ticketKind(variant), {
    options: { baseUrl: service.url },
    firstSample: 1,
  });
  return {
    r,
    codes: r.findings.filter((f) => f.severity === "broken").map((f) => f.code),
    service,
  };
}

describe("testKind (@idem/kit/test)", () => {
  it("passes a kind that keeps the contract, with a throw before and after every request and at its fault point", async () => {
    const { r, codes } = await report("correct");
    expect(codes).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.requests).toEqual(["GET /tickets", "POST /tickets"]);
    expect(r.faultCalls).toEqual(["test.after-create"]);
    expect(r.scenarios.map((s) => s.at)).toEqual([
      "before request 1 (GET /tickets)",
      "after request 1 (GET /tickets)",
      "before request 2 (POST /tickets)",
      "after request 2 (POST /tickets)",
      "fault test.after-create (call 1)",
    ]);
    expect(r.scenarios.every((s) => s.fired && s.ok && s.observed === "present")).toBe(true);
    expect(r.samples.invalid).toEqual([{ field: "title", refused: true, named: ["title"] }]);
    expect(r.cannotSee.length).toBeGreaterThan(0);
  });

  it("finds a gap between two writes that no fault point names: the retry skips the second", async () => {
    const { r, codes } = await report("gap");
    expect(codes).toContain(KIND_TEST_FINDINGS.INCOMPLETE_AFTER_THROW);
    const gap = r.findings.find((f) => f.code === KIND_TEST_FINDINGS.INCOMPLETE_AFTER_THROW);
    expect(gap?.details?.at).toBe("after request 2 (POST /tickets)");
  });

  it("passes the same two writes once the probe tells the first from both", async () => {
    const { codes } = await report("gap-closed");
    expect(codes).toEqual([]);
  });

  it("finds a first write without the key: the retry repeats the POST, and the scan cannot see it", async () => {
    const { codes, r } = await report("unkeyed-first-write");
    expect(codes).toContain(KIND_TEST_FINDINGS.REPEATED_WRITE_AFTER_THROW);
    expect(codes).not.toContain(KIND_TEST_FINDINGS.DUPLICATED_AT_TARGET);
    expect(r.checks.every((c) => c.ok)).toBe(true);
  });

  it("finds a probe that always says absent", async () => {
    const { codes } = await report("probe-always-absent");
    expect(codes).toContain(KIND_TEST_FINDINGS.ABSENT_AFTER_APPLY);
  });

  it("finds a probe that always says present", async () => {
    const { codes, r } = await report("probe-always-present");
    expect(codes).toEqual([KIND_TEST_FINDINGS.PRESENT_BEFORE_APPLY]);
    expect(r.scenarios).toEqual([]);
  });

  it("finds a failed request let out as a plain throw, which idem never retries", async () => {
    const { codes } = await report("plain-throw");
    expect(codes).toContain(KIND_TEST_FINDINGS.RUNS_ENDED_DEAD);
  });

  it("finds a valid sample the kind refuses, and stops there", async () => {
    await using service = await startTicketStandIn();
    const kind = {
      ...ticketKind("correct"),
      samples: { valid: () => ({ kind: "test.ticket", title: "" }), invalid: [] },
    };
    const r = await testKind(kind, { options: { baseUrl: service.url } });
    expect(r.findings.map((f) => f.code)).toEqual([KIND_TEST_FINDINGS.VALID_SAMPLE_REFUSED]);
    expect(service.tickets).toEqual([]);
  });

  it("holds a declared guarantee to account: a lost answer turned into an unknown outcome", async () => {
    await using service = await startTicketStandIn();
    const correct = ticketKind("correct");
    const kind = {
      ...correct,
      apply: async (...args: Parameters<typeof correct.apply>) => {
        try {
          return await correct.apply(...args);
        } catch (e) {
          throw fail.unknownOutcome("the answer was lost", e);
        }
      },
    };
    const r = await testKind(kind, { options: { baseUrl: service.url } });
    const codes = r.findings.map((f) => f.code);
    expect(codes).toContain(KIND_TEST_FINDINGS.RUNS_ENDED_UNCERTAIN);
    expect(codes).toContain(KIND_TEST_FINDINGS.GUARANTEE_NOT_SHOWN);
    expect(r.ok).toBe(false);
  });

  it("assertKind throws node's AssertionError naming each broken finding, and answers the report otherwise", async () => {
    await using service = await startTicketStandIn();
    const options = { options: { baseUrl: service.url } };
    await expect(assertKind(ticketKind("gap"), options)).rejects.toSatisfy(
      (e) => e instanceof AssertionError && /incomplete-after-throw/.test(e.message),
    );
    expect((await assertKind(ticketKind("correct"), options)).ok).toBe(true);
  });
});
