import type { DoctorContext, KindFinding } from "@idem/kit";
import type { HttpSection } from "./http-targets.js";

/**
 * `idem doctor`'s check of every http target: a warning when an interrupted request could not be
 * resolved (neither idempotency keys nor a probe URL nor a lookup), a violation for each header
 * variable that is unset; with `--network`, a GET of its baseUrl (unreachable is a violation).
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
