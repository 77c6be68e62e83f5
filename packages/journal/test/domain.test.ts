import { canonicalJson, sha256Hex } from "@idem/schema";
import { describe, expect, it } from "vitest";
import {
  enqueueOutcome,
  exhaustedDelivery,
  jobClaimDecision,
  laterRunsNote,
  recordOutcome,
  runClaimDecision,
} from "../src/domain/decisions.js";
import { effectEvent, JOURNAL_EVENTS } from "../src/domain/events.js";
import { jobInput } from "../src/domain/job-input.js";
import {
  ACTIVE_RUN_STATES,
  EFFECT_STATES,
  isActiveRun,
  isSettledEffect,
  JOB_STATES,
  JOB_TRANSITIONS,
  RUN_STATES,
  RUN_TRANSITIONS,
  SETTLED_EFFECT_STATES,
  sqlStateList,
  UNFINISHED_RUN_STATES,
} from "../src/domain/states.js";

describe("the journal's dialect-free domain", () => {
  it("hashes a job's input as sha256 of the canonical {agent, input}, serializing the input once", () => {
    const job = { agent: "writer", input: { b: [1, 2], a: "x" } };
    const { input, hash } = jobInput(job);
    expect(input).toBe(canonicalJson(job.input));
    expect(hash).toBe(sha256Hex(canonicalJson({ agent: job.agent, input: job.input })));
    expect(jobInput({ agent: "writer", input: { a: "x", b: [1, 2] } }).hash).toBe(hash);
    expect(jobInput({ agent: "reviewer", input: job.input }).hash).not.toBe(hash);
  });

  it("calls the same hash a duplicate and another hash a conflict, for outputs and jobs alike", () => {
    expect(recordOutcome("h1", "h1")).toBe("duplicate");
    expect(recordOutcome("h1", "h2")).toBe("conflict");
    expect(enqueueOutcome("h1", "h1")).toBe("duplicate");
    expect(enqueueOutcome("h1", "h2")).toBe("conflict");
  });

  it("takes over a running run until its lease has expired maxLeaseExpiries times, then ends it dead", () => {
    expect(runClaimDecision({ state: "pending", lease_expiries: 9 }, 3)).toEqual({
      action: "claim",
      takeover: false,
    });
    expect(runClaimDecision({ state: "running", lease_expiries: 1 }, 3)).toEqual({
      action: "claim",
      takeover: true,
    });
    const dead = runClaimDecision({ state: "running", lease_expiries: 2 }, 3);
    expect(dead.action).toBe("dead");
  });

  it("names at most 20 later runs that go ahead of a dead one", () => {
    expect(laterRunsNote([])).toBe("");
    expect(laterRunsNote(["a", "b"])).toBe("; later runs on its targets go ahead: a, b");
    const many = Array.from({ length: 21 }, (_, i) => `j${i}`);
    expect(laterRunsNote(many)).toMatch(/j19, \.\.\.$/);
  });

  it("decides a delivery's claim of a job: conflict, dead, recorded, held or acquire", () => {
    const job = { input_hash: "h", state: "queued" as const, lease_until: null };
    expect(jobClaimDecision(job, "other", 0)).toEqual({ status: "conflict" });
    expect(jobClaimDecision({ ...job, state: "dead" }, "h", 0)).toEqual({ status: "dead" });
    expect(jobClaimDecision({ ...job, state: "done" }, "h", 0)).toEqual({ status: "recorded" });
    const running = { ...job, state: "running" as const, lease_until: 100 };
    expect(jobClaimDecision(running, "h", 50)).toEqual({ status: "held", until: 100 });
    expect(jobClaimDecision(running, "h", 100)).toEqual({ status: "acquire" });
    expect(jobClaimDecision(job, "h", 0)).toEqual({ status: "acquire" });
  });

  it("dead-letters a job delivered maxDeliver times: infrastructure while running, else its last class", () => {
    const job = { state: "queued" as const, deliveries: 3, last_class: null, last_error: null };
    expect(exhaustedDelivery(job, undefined)).toBeUndefined();
    expect(exhaustedDelivery(job, 4)).toBeUndefined();
    expect(exhaustedDelivery(job, 3)).toEqual({
      class: "transient",
      error: "lease expired after 3 deliveries",
      deliveries: 3,
    });
    expect(
      exhaustedDelivery({ ...job, state: "running", last_class: "validation" }, 3)?.class,
    ).toBe("infrastructure");
    expect(
      exhaustedDelivery({ ...job, last_class: "validation", last_error: "boom" }, 3),
    ).toMatchObject({ class: "validation", error: "boom" });
  });

  it("defines settled and active states once, and transitions only between known states", () => {
    expect([...SETTLED_EFFECT_STATES]).toEqual(["applied", "present", "skipped"]);
    for (const s of EFFECT_STATES)
      expect(isSettledEffect(s)).toBe(SETTLED_EFFECT_STATES.includes(s));
    // Unfinished: the due states and awaiting (a person's approval), which is never due.
    for (const s of RUN_STATES) expect(isActiveRun(s)).toBe(UNFINISHED_RUN_STATES.includes(s));
    expect(UNFINISHED_RUN_STATES).toEqual([...ACTIVE_RUN_STATES, "awaiting"]);
    for (const [from, tos] of Object.entries(RUN_TRANSITIONS)) {
      expect(RUN_STATES).toContain(from);
      for (const to of tos) expect(RUN_STATES).toContain(to);
    }
    for (const [from, tos] of Object.entries(JOB_TRANSITIONS)) {
      expect(JOB_STATES).toContain(from);
      for (const to of tos) expect(JOB_STATES).toContain(to);
    }
    expect(sqlStateList(ACTIVE_RUN_STATES)).toBe("('pending','running','failed')");
  });

  it("takes its states from @idem/schema and re-exports them, the same objects, not copies", async () => {
    const journal = await import("../src/index.js");
    const schema = await import("@idem/schema");
    for (const name of [
      "RUN_STATES",
      "EFFECT_STATES",
      "JOB_STATES",
      "ACTIVE_RUN_STATES",
      "SETTLED_EFFECT_STATES",
      "UNFINISHED_JOB_STATES",
      "UNFINISHED_RUN_STATES",
      "RUN_TRANSITIONS",
      "JOB_TRANSITIONS",
      "isActiveRun",
      "isSettledEffect",
    ] as const) {
      expect(journal[name], name).toBe(schema[name]);
    }
  });

  it("names the events the store writes, settle's after the effect state", () => {
    expect(effectEvent("applied")).toBe(JOURNAL_EVENTS.EFFECT_APPLIED);
    expect(effectEvent("uncertain")).toBe(JOURNAL_EVENTS.EFFECT_UNCERTAIN);
    expect(JOURNAL_EVENTS.OUTPUT_RECORDED).toBe("output.recorded");
  });
});
