import type { KindRegistry } from "@idem/effects";
import { createKindHost } from "@idem/kit";
import { type Config, systemClock } from "@idem/schema";
import { kindsOf } from "../validate/load-kinds.js";
import type { AddFinding } from "./finding.js";

type Kind = KindRegistry["kinds"][number];
type DoctorContext = Parameters<NonNullable<Kind["doctor"]>>[0];

/** How `checkKinds` bounds and reaches the kinds' checks. */
export interface KindChecksOptions {
  network: boolean;
  timeoutMs: number;
  /** Where credentials are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * Runs the `doctor` check of every registered kind that has one (the targets each kind's options
 * configure: repositories, folders, services, databases), in the registry's order, once for kinds
 * that share one check (the two git kinds): each finding added as it is, a throw or a check that
 * does not answer within `max(30 s, 6 × timeoutMs)` a violation keyed by the kind. Never throws.
 * Answers what was checked, for doctor's summary: what each check names (`repo site`); a kind of
 * the config's own (no config section) that names nothing is listed as `kind <name>`.
 */
export async function checkKinds(
  config: Config,
  options: KindChecksOptions,
  add: AddFinding,
): Promise<string[]> {
  let registry: KindRegistry;
  try {
    registry = kindsOf(config);
  } catch (e) {
    add("violation", "kinds", (e as Error).message, "fix the config's kinds section");
    return [];
  }
  const host = createKindHost(options.env ? { env: options.env } : {});
  const checked: string[] = [];
  const ran = new Set<unknown>();
  for (const kind of registry.kinds) {
    if (!kind.doctor || ran.has(kind.doctor)) continue;
    ran.add(kind.doctor);
    const named: string[] = [];
    const ctx: DoctorContext = {
      ...registry.context(kind.name),
      clock: systemClock,
      fetch: globalThis.fetch,
      timeoutMs: options.timeoutMs,
      network: options.network,
      checking: (what) => named.push(what),
      env: (variable) => host.env(variable),
    };
    const bound = Math.max(30_000, 6 * options.timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    try {
      const findings = await Promise.race([
        kind.doctor(ctx),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`its check did not answer within ${bound} ms`)),
            bound,
          );
        }),
      ]);
      for (const f of findings)
        add(f.severity, f.key, f.message, f.fix ?? `see docs for the ${kind.name} kind`);
    } catch (e) {
      add(
        "violation",
        `kinds.${kind.name}`,
        `the ${kind.name} kind's doctor check failed: ${(e as Error).message}`,
        "see the message; the kind's docs say what it needs",
      );
    } finally {
      clearTimeout(timer);
      const unnamed = named.length === 0 && kind.configSection === undefined;
      checked.push(...(unnamed ? [`kind ${kind.name}`] : named));
    }
  }
  return checked;
}
