import { type DoctorContext, isIdemError, type KindFinding } from "@idem/kit";
import type { PublishTransport, TransportStreamState } from "../../publish-transport.js";
import { publishUrl } from "./nats-publish-effect.js";
import type { PublishTargets } from "./publish-targets.js";

/**
 * `idem doctor`'s check of every publish target: a server to reach (its `url`, else idem's own
 * NATS servers), and on it the target's stream, present (missing, a warning: the next publish
 * makes it), capturing `<subjectPrefix>.>`, and on
 * idem's own cluster keeping as many replicas as the jobs stream. Read-only, through the kind's
 * transport (one connection per server, bounded by the doctor's timeout). A server idem's own
 * queue uses that does not answer is reported by doctor's NATS check, not again here.
 */
export async function publishDoctor(
  ctx: DoctorContext<PublishTargets>,
  transport: (() => PublishTransport) | undefined,
): Promise<KindFinding[]> {
  const targets = Object.entries(ctx.options);
  if (targets.length === 0 || !transport) return [];
  ctx.checking("NATS publish targets");
  const findings: KindFinding[] = [];
  const servers = ctx.nats?.servers;
  const t = transport();
  try {
    for (const [alias, target] of targets) {
      const key = `publish.${alias}`;
      if (target.url === null && servers === undefined) {
        findings.push({
          severity: "violation",
          key: `${key}.url`,
          message: "no NATS server: the target has no url and there is no nats section or NATS_URL",
          fix: `set ${key}.url or configure nats`,
        });
        continue;
      }
      const url = publishUrl(target, ctx.nats);
      const fix = `create it: nats stream add ${target.stream} --subjects '${target.subjectPrefix}.>'`;
      let state: TransportStreamState | "missing";
      try {
        state = await t.inspectStream(url, target, { timeoutMs: ctx.timeoutMs });
      } catch (e) {
        if (isIdemError(e, "UNAVAILABLE")) {
          if (url !== servers)
            findings.push({
              severity: "violation",
              key: `${key}.url`,
              message: `cannot reach NATS at ${url}: ${((e.cause as Error | undefined) ?? e).message}`,
              fix: "start that server or fix the url; its publishes fail and retry until it answers",
            });
          continue;
        }
        findings.push({
          severity: "violation",
          key: `${key}.stream`,
          message: `cannot read stream ${target.stream}: ${(e as Error).message}`,
          fix,
        });
        continue;
      }
      if (state === "missing") {
        // The next nats.publish to the target makes it (capturing the prefix, 1 h duplicate
        // window): a warning, as for the jobs stream an executor makes.
        findings.push({
          severity: "warning",
          key: `${key}.stream`,
          message: `stream ${target.stream} does not exist on ${url} (a new server, or a lost store): the next nats.publish to ${key} makes it`,
          fix: `nothing, or make it as you want it first (${fix.replace("create it: ", "")} --dupe-window 1h); anything it held before is gone`,
        });
      } else if (!state.captures) {
        findings.push({
          severity: "violation",
          key: `${key}.stream`,
          message: `stream ${target.stream} does not capture ${target.subjectPrefix}.> (it has ${JSON.stringify(state.subjects)})`,
          fix: `add ${target.subjectPrefix}.> to the stream's subjects or fix ${key}.subjectPrefix`,
        });
      } else if (ctx.nats && url === servers && state.replicas < ctx.nats.replicas) {
        // On the cluster of the nats section, a target's stream keeps as many copies as the
        // jobs stream: fewer, and the loss of a node can lose what idem published.
        findings.push({
          severity: "violation",
          key: `${key}.stream`,
          message: `stream ${target.stream} has ${state.replicas} replica(s), fewer than nats.replicas ${ctx.nats.replicas}`,
          fix: `nats stream edit ${target.stream} --replicas ${ctx.nats.replicas}`,
        });
      }
    }
  } finally {
    await t.close?.();
  }
  return findings;
}
