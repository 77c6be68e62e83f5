// How the kinds' tests call a kind as idem's interpreter does, and read the errors it throws.
import type { EffectSpecBase, OpenedKind } from "@idem/kit";
import { isIdemError } from "@idem/schema";
import { expect } from "vitest";

/**
 * One effect interpreted as idem does (docs/reliability.md): probe; present ends it; absent is
 * followed by apply with that probe. Answers how it ended.
 */
export async function interpret(
  k: OpenedKind,
  spec: EffectSpecBase,
  key: string,
  since: number,
): Promise<{ outcome: "present" | "applied"; detail: Record<string, unknown> }> {
  const probed = await k.probe(spec, key, { since });
  if (probed.status === "present") return { outcome: "present", detail: probed.detail };
  if (probed.status === "conflict") throw new Error(`conflict: ${probed.reason}`);
  return { outcome: "applied", detail: await k.apply(spec, key, { since, probed }) };
}

/** The error `p` rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

/** Asserts an IdemError of `code` (and its retry wait, when given, within `[min, max]` ms). */
export function expectIdemError(
  e: unknown,
  code: string,
  retryAfter?: { min: number; max: number },
): void {
  expect(isIdemError(e), String(e)).toBe(true);
  expect((e as { code: string }).code, (e as Error).message).toBe(code);
  if (retryAfter) {
    const wait = (e as { details?: { retryAfterMs?: number } }).details?.retryAfterMs;
    expect(wait).toBeGreaterThanOrEqual(retryAfter.min);
    expect(wait).toBeLessThanOrEqual(retryAfter.max);
  }
}

/** The field an INVALID_INPUT names. */
export function fieldOf(e: unknown): string | undefined {
  return (e as { details?: { field?: string } }).details?.field;
}
