/**
 * The checks every kind's `doctor` makes of what its options name outside the config: a credential
 * variable that is set, a target that answers. Built-in kinds and the operator's own use them
 * alike, so `idem doctor` says the same thing, the same way, of every kind (docs/effect-kinds.md).
 */
import type { DoctorContext, KindFinding } from "./effect-kind.js";

/**
 * A violation naming `variable` (never a value) when it is unset or empty, at config key `key`
 * (`github.tokenEnv`); `needs` says what it holds (`the GitHub token`). Undefined when it is set.
 */
export function missingCredential(
  ctx: Pick<DoctorContext<unknown>, "env">,
  variable: string,
  key: string,
  needs: string,
): KindFinding | undefined {
  try {
    ctx.env(variable);
    return undefined;
  } catch {
    return {
      severity: "violation",
      key,
      message: `the environment variable ${variable} is not set (${needs}): every effect of this kind would fail`,
      fix: `export ${variable}=... in the environment of idem's processes (the interpreter's, idem up's)`,
    };
  }
}

/** Why a fetch failed, as short as it says it (`ECONNREFUSED`, `the check timed out`). */
function cause(e: unknown): string {
  if (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError"))
    return "no answer in time";
  const inner = (e as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof inner?.code === "string") return inner.code;
  if (typeof inner?.message === "string") return inner.message;
  return e instanceof Error ? e.message : String(e);
}

/**
 * A GET of `url` within the doctor's timeout: any HTTP answer (even 404 or 401) means the target is
 * reachable; no answer is a violation at `key` naming the URL (without credentials or query).
 */
export async function unreachable(
  ctx: Pick<DoctorContext<unknown>, "fetch" | "timeoutMs">,
  url: string,
  key: string,
): Promise<KindFinding | undefined> {
  try {
    const res = await ctx.fetch(url, { method: "GET", signal: AbortSignal.timeout(ctx.timeoutMs) });
    await res.body?.cancel();
    return undefined;
  } catch (e) {
    const shown = new URL(url);
    shown.username = "";
    shown.password = "";
    shown.search = "";
    return {
      severity: "violation",
      key,
      message: `${shown.href} is not reachable (${cause(e)})`,
      fix: "start the service or fix the URL; the kind's effects fail and retry until it answers",
    };
  }
}
