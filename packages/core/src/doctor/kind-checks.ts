import type { KindRegistry } from "@idem/effects";
import { type Config, IdemError, systemClock } from "@idem/schema";
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
 * Runs the `doctor` check of every registered kind that has one (the sql.exec targets, a user
 * kind's service): each finding added as it is, a throw or a check that does not answer within
 * `max(30 s, 6 × timeoutMs)` a violation keyed by the kind. Never throws. Answers the names of the
 * kinds checked, for doctor's summary.
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
  const env = options.env ?? process.env;
  const checked: string[] = [];
  for (const kind of registry.kinds) {
    if (!kind.doctor) continue;
    checked.push(`kind ${kind.name}`);
    const ctx: DoctorContext = {
      config,
      options: registry.options(kind.name),
      clock: systemClock,
      fetch: globalThis.fetch,
      timeoutMs: options.timeoutMs,
      network: options.network,
      env(variable) {
        const value = env[variable];
        if (value === undefined || value === "")
          throw new IdemError("INVALID_CONFIG", `the environment variable ${variable} is not set`, {
            details: { variable },
          });
        return value;
      },
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
    }
  }
  return checked;
}
