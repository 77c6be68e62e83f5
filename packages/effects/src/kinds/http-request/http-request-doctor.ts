import { type DoctorContext, isIdemError, type KindFinding } from "@idem/kit";
import { lookupResult, readLookup } from "./http-lookup.js";
import { keyedUrl } from "./http-request-effect.js";
import type { HttpSection, HttpTarget } from "./http-targets.js";

/** A key no effect has: a job ID of doctor's own, fresh each run. */
const unknownKey = (now: number) => `idem-doctor-${now.toString(36)}/0`;

/**
 * Whether a target's lookup filters: asked for a key no effect has, it must answer nothing that
 * carries another key (a service that ignores the filter answers its items, and a lookup there
 * could not tell absent from present). A target holding no item yet answers nothing either way.
 */
async function lookupFinding(
  ctx: DoctorContext<HttpSection>,
  alias: string,
  t: HttpTarget,
): Promise<KindFinding | undefined> {
  const lookup = t.lookup;
  if (!lookup) return undefined;
  const headers: Record<string, string> = {};
  try {
    for (const [name, variable] of Object.entries(t.headersEnv ?? {}))
      headers[name] = ctx.env(variable);
  } catch {
    return undefined; // reported above
  }
  const key = unknownKey(ctx.clock.now());
  const at = `http.targets.${alias}.lookup`;
  try {
    const res = await ctx.fetch(keyedUrl(t, lookup.path, key), {
      method: "GET",
      headers,
      redirect: "manual",
      signal: AbortSignal.timeout(ctx.timeoutMs),
    });
    const read = await readLookup(res, lookup, alias);
    if (read === undefined) {
      await res.body?.cancel().catch(() => {});
      return {
        severity: "violation",
        key: `${at}.path`,
        message: `the lookup answered ${res.status} for a key no effect has`,
        fix: "check the lookup's path and the credentials in headersEnv",
      };
    }
    if (read !== "not-found") lookupResult(read.found, lookup, key, alias);
    return undefined;
  } catch (e) {
    if (!isIdemError(e, "INVALID_CONFIG")) throw e;
    const details = (e as { details?: { key?: unknown } }).details;
    return {
      severity: "violation",
      key: typeof details?.key === "string" ? details.key : at,
      message: e.message,
      fix: "point the lookup at a filter by exact external id, which answers nothing for a key no effect has (docs/kinds/http.md, Lookup)",
    };
  }
}

/**
 * `idem doctor`'s check of every http target: a warning when an interrupted request could not be
 * resolved (neither idempotency keys nor a probe URL nor a lookup), a violation for each header
 * variable that is unset; with `--network`, a GET of its baseUrl (unreachable is a violation) and
 * of its lookup for a key no effect has (one that answers items of other keys is a violation).
 */
export async function httpRequestDoctor(ctx: DoctorContext<HttpSection>): Promise<KindFinding[]> {
  const findings: KindFinding[] = [];
  for (const [alias, t] of Object.entries(ctx.options.targets)) {
    ctx.checking(`http target ${alias}`);
    const key = `http.targets.${alias}`;
    if (!t.idempotencyKeys && t.probeUrl === null && t.lookup === undefined) {
      findings.push({
        severity: "warning",
        key,
        message:
          "neither idempotencyKeys nor probeUrl nor lookup: an effect interrupted mid-request becomes uncertain and waits for a human",
        fix: `set ${key}.idempotencyKeys if the service honours Idempotency-Key, or give it a probeUrl or a lookup (docs/kinds/http.md)`,
      });
    }
    for (const [header, variable] of Object.entries(t.headersEnv ?? {})) {
      try {
        ctx.env(variable);
      } catch {
        findings.push({
          severity: "violation",
          key: `${key}.headersEnv.${header}`,
          message: `the environment variable ${variable} is not set: every request to ${alias} would fail`,
          fix: `set ${variable} in the environment of idem's processes`,
        });
      }
    }
    if (!ctx.network) continue;
    try {
      const res = await ctx.fetch(t.baseUrl, {
        method: "GET",
        signal: AbortSignal.timeout(ctx.timeoutMs),
      });
      await res.body?.cancel();
      const filters = await lookupFinding(ctx, alias, t);
      if (filters) findings.push(filters);
    } catch (e) {
      findings.push({
        severity: "violation",
        key: `${key}.baseUrl`,
        message: `${t.baseUrl} is not reachable: ${(e as Error).message}`,
        fix: "start the service or fix the URL; its effects fail and retry until it answers",
      });
    }
  }
  return findings;
}
