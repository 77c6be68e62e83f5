import { type Clock, type Config, defaultConfig, IdemError, systemClock } from "@idem/schema";
import type {
  AnyEffectKind,
  ApplyOrder,
  EffectSpecBase,
  KindContext,
  OpenContext,
  ProbeHint,
  ProbeResult,
} from "./effect-kind.js";

/** How `openKind` hosts a kind outside idem's interpreter (a kind's own tests, the drill). */
export interface OpenKindOptions {
  /** The config its pure parts see (default: idem's defaults rooted at the current folder). */
  config?: Config;
  /** Its options as the config would give them; parsed by the kind's `options` schema. */
  options?: unknown;
  /** The environment credentials are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  fetch?: typeof fetch;
  clock?: Clock;
  /** Called at the kind's named fault points (default: nothing). */
  fault?: (point: string) => void;
  /** What the host passes to idem's own kinds (see `OpenContext.services`). */
  services?: Readonly<Record<string, unknown>>;
}

/** One kind, opened: its probe and apply with the calls idem would make, and `close`. */
export interface OpenedKind {
  readonly kind: AnyEffectKind;
  readonly context: KindContext<unknown>;
  /** Parses `spec` with the kind's schema and runs its `check`. @throws IdemError INVALID_INPUT */
  check(spec: unknown): EffectSpecBase;
  probe(
    spec: EffectSpecBase,
    key: string,
    call?: { since?: number; hint?: ProbeHint },
  ): Promise<ProbeResult>;
  apply(
    spec: EffectSpecBase,
    key: string,
    call?: { since?: number; probed?: ProbeResult; order?: ApplyOrder; hint?: ProbeHint },
  ): Promise<Record<string, unknown>>;
  /** The keys present at the spec's target (the kind's `scan`), or undefined without one. */
  scan(spec: EffectSpecBase): Promise<Map<string, string[]> | undefined>;
  close(): Promise<void>;
}

/**
 * Hosts one kind as idem's interpreter does, for its tests and the conformance drill: options
 * parsed, its resource opened on first use (once), probe and apply called with the key, the
 * output's recording time (`since`, default now) and its resource. Never retries.
 * @throws IdemError INVALID_CONFIG when the options do not parse, or a credential is unset.
 */
export function openKind(kind: AnyEffectKind, options: OpenKindOptions = {}): OpenedKind {
  const config = options.config ?? defaultConfig(process.cwd());
  const clock = options.clock ?? systemClock;
  let parsed: unknown = options.options;
  if (kind.options) {
    const r = kind.options.safeParse(options.options ?? {});
    if (!r.success) {
      const first = r.error.issues[0];
      throw new IdemError(
        "INVALID_CONFIG",
        `kinds.${kind.name}.options${first?.path.length ? `.${first.path.join(".")}` : ""}: ${first?.message ?? "is invalid"}`,
      );
    }
    parsed = r.data;
  }
  const context: KindContext<unknown> = { config, options: parsed };
  const shared = new Map<string, unknown>();
  const env = options.env ?? process.env;
  const open: OpenContext<unknown> = {
    ...context,
    clock,
    fetch: options.fetch ?? globalThis.fetch,
    services: options.services ?? {},
    fault: options.fault ?? (() => {}),
    env(variable) {
      const value = env[variable];
      if (value === undefined || value === "")
        throw new IdemError("INVALID_CONFIG", `the environment variable ${variable} is not set`, {
          details: { variable },
        });
      return value;
    },
    shared<T>(id: string, create: () => T): T {
      if (!shared.has(id)) shared.set(id, create());
      return shared.get(id) as T;
    },
  };
  let resource: Promise<unknown> | undefined;
  const opened = () => {
    resource ??= Promise.resolve(kind.open ? kind.open(open) : undefined);
    return resource;
  };
  const base = async (key: string, since: number | undefined, hint: ProbeHint | undefined) => ({
    ...context,
    key,
    resource: await opened(),
    since: since ?? clock.now(),
    hint,
    clock,
  });
  return {
    kind,
    context,
    check(spec) {
      const r = kind.spec.safeParse(spec);
      if (!r.success) {
        const first = r.error.issues[0];
        const field = first?.path.join(".") ?? "";
        throw new IdemError("INVALID_INPUT", `${field} ${first?.message ?? "is invalid"}`, {
          details: { field },
        });
      }
      const issues: { field: string; message: string }[] = [];
      kind.check?.(r.data, {
        ...context,
        issue: (field, message) => issues.push({ field, message }),
      });
      const [first] = issues;
      if (first)
        throw new IdemError("INVALID_INPUT", `${first.field} ${first.message}`, {
          details: { field: first.field, issues },
        });
      return r.data as EffectSpecBase;
    },
    async probe(spec, key, call = {}) {
      return kind.probe(spec, await base(key, call.since, call.hint));
    },
    async apply(spec, key, call = {}) {
      return kind.apply(spec, {
        ...(await base(key, call.since, call.hint)),
        probed: call.probed,
        order: call.order,
      });
    },
    async scan(spec) {
      if (!kind.scan) return undefined;
      return kind.scan.keys(spec, { ...context, resource: await opened(), clock });
    },
    async close() {
      if (resource === undefined) return;
      const r = await resource;
      resource = undefined;
      await kind.close?.(r);
    },
  };
}
