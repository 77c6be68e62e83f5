import { type Clock, IdemError, isIdemError, issuePath, systemClock } from "@idem/schema";
import type {
  AnyEffectKind,
  HostNats,
  KindContext,
  KindLimits,
  KindProgress,
  OpenContext,
} from "./effect-kind.js";

/** What a kind host is made of; every field has a default. */
export interface KindHostOptions {
  /** The environment credentials are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
  clock?: Clock;
  /** Called at the kinds' named fault points (default: nothing). */
  fault?: (point: string) => void;
  /** Told the progress of a kind's long preparation (default: nothing), with the kind's name. */
  onProgress?: (kind: string, progress: KindProgress) => void;
}

/** The limits a kind sees when none are given: idem's defaults. */
export const DEFAULT_KIND_LIMITS: KindLimits = { maxFileBytes: 10_485_760 };

/**
 * What the kinds of one process share: their credentials' environment, fetch, clock, fault hook
 * and the values they share by id (`OpenContext.shared`). `openKind` makes one for a single kind;
 * idem's effects host makes one for all the kinds of a config and opens each kind on it.
 */
export interface KindHost {
  readonly clock: Clock;
  /** The context `open` gets: `context` with the host's parts. */
  openContext(kind: AnyEffectKind, context: KindContext<unknown>): OpenContext<unknown>;
  /** A credential from the environment. @throws IdemError INVALID_CONFIG naming the variable. */
  env(variable: string): string;
  /** Runs the shared values' `dispose` once each, in the order they were made. */
  close(): Promise<void>;
}

/** Makes a kind host; nothing is opened until a kind asks. */
export function createKindHost(options: KindHostOptions = {}): KindHost {
  const env = options.env ?? process.env;
  const clock = options.clock ?? systemClock;
  const shared = new Map<string, { value: unknown; dispose?: (v: unknown) => unknown }>();
  const credential = (variable: string): string => {
    const value = env[variable];
    if (value === undefined || value === "")
      throw new IdemError("INVALID_CONFIG", `the environment variable ${variable} is not set`, {
        details: { variable },
      });
    return value;
  };
  return {
    clock,
    env: credential,
    openContext: (kind, context) => ({
      ...context,
      clock,
      fetch: options.fetch ?? globalThis.fetch,
      fault: (point) => options.fault?.(point),
      progress: (p) => options.onProgress?.(kind.name, p),
      env: credential,
      shared<T>(id: string, create: () => T, dispose?: (value: T) => void | Promise<void>): T {
        let entry = shared.get(id);
        if (!entry) {
          entry = { value: create(), ...(dispose ? { dispose: dispose as never } : {}) };
          shared.set(id, entry);
        }
        return entry.value as T;
      },
    }),
    async close() {
      const all = [...shared.values()];
      shared.clear();
      for (const e of all) await e.dispose?.(e.value);
    },
  };
}

/** Where `parseKindOptions` finds a kind's options. */
export interface KindOptionsSource {
  /** The config file's folder (default the working directory). */
  dir?: string;
  /** Where the options are in the config (default `kinds.<name>.options`). */
  at?: string;
}

/** One problem with a kind's options, by its key in the config (`repos.site.branch`). */
export interface KindOptionsIssue {
  key: string;
  message: string;
}

/**
 * A kind's options parsed by its `options` schema and resolved by its `resolveOptions` (as given
 * when it has neither), or every problem found, each named by its key under `source.at`. Never
 * throws for bad options (a `resolveOptions` that throws anything but INVALID_CONFIG propagates).
 */
export function safeParseKindOptions(
  kind: AnyEffectKind,
  raw: unknown,
  source: KindOptionsSource = {},
): { ok: true; options: unknown } | { ok: false; issues: KindOptionsIssue[] } {
  const at = source.at ?? `kinds.${kind.name}.options`;
  if (!kind.options) return { ok: true, options: raw };
  const r = kind.options.safeParse(raw ?? {});
  if (!r.success) {
    return {
      ok: false,
      issues: r.error.issues.map((i) => {
        const path = issuePath(i.path as (string | number)[]);
        return { key: `${at}${path ? `.${path}` : ""}`, message: i.message };
      }),
    };
  }
  if (!kind.resolveOptions) return { ok: true, options: r.data };
  try {
    return {
      ok: true,
      options: kind.resolveOptions(r.data, { dir: source.dir ?? process.cwd(), at }),
    };
  } catch (e) {
    if (!isIdemError(e, "INVALID_CONFIG")) throw e;
    const key = typeof e.details?.key === "string" ? e.details.key : at;
    return { ok: false, issues: [{ key, message: e.message }] };
  }
}

/**
 * A kind's options parsed and resolved as `safeParseKindOptions` does: what every host of the kind
 * (idem's registry, `openKind`) does with them.
 * @throws IdemError INVALID_CONFIG naming `<at>.<path>` of the first problem (`details.key`).
 */
export function parseKindOptions(
  kind: AnyEffectKind,
  raw: unknown,
  source: KindOptionsSource = {},
): unknown {
  const r = safeParseKindOptions(kind, raw, source);
  if (r.ok) return r.options;
  const [first] = r.issues;
  const key = first?.key ?? source.at ?? `kinds.${kind.name}.options`;
  throw new IdemError("INVALID_CONFIG", `${key}: ${first?.message ?? "is invalid"}`, {
    details: { key },
  });
}

/** The context of a kind's pure parts from its parsed options and the host's facts. */
export function kindContextOf(
  options: unknown,
  facts: { limits?: KindLimits | undefined; nats?: HostNats | undefined } = {},
): KindContext<unknown> {
  return {
    options,
    limits: facts.limits ?? DEFAULT_KIND_LIMITS,
    ...(facts.nats ? { nats: facts.nats } : {}),
  };
}
