import { IdemError } from "@idem/schema";
import type {
  AnyEffectKind,
  ApplyOrder,
  EffectSpecBase,
  HostNats,
  KindContext,
  KindLimits,
  ProbeHint,
  ProbeResult,
} from "./effect-kind.js";
import {
  createKindHost,
  type KindHost,
  type KindHostOptions,
  kindContextOf,
  parseKindOptions,
} from "./kind-host.js";

/** How `openKind` hosts a kind: as idem's interpreter does, or in a kind's own tests. */
export interface OpenKindOptions extends KindHostOptions {
  /** Its options as the config would give them: parsed by the kind's `options` and `resolveOptions`. */
  options?: unknown;
  /** Where the options are in the config, for messages (default `kinds.<name>.options`). */
  optionsAt?: string;
  /** The config file's folder, relative paths in the options are resolved against (default cwd). */
  dir?: string;
  /** The config's limits (default idem's). */
  limits?: KindLimits;
  /** idem's own NATS servers, as the config's `nats` section gives them (default none). */
  nats?: HostNats;
  /**
   * The host the kind shares with others (idem's effects host opens every kind of a config on one);
   * the host's own options above are then ignored, and `close()` leaves the host open. Default: a
   * host of its own, closed with the kind.
   */
  host?: KindHost;
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
    call?: { since?: number | undefined; hint?: ProbeHint | undefined },
  ): Promise<ProbeResult>;
  apply(
    spec: EffectSpecBase,
    key: string,
    call?: {
      since?: number | undefined;
      probed?: ProbeResult | undefined;
      order?: ApplyOrder | undefined;
      hint?: ProbeHint | undefined;
    },
  ): Promise<Record<string, unknown>>;
  /**
   * The kind's `probeBatch` over items of one batch target, in recording order (`simulate`: as if
   * the earlier absent ones had been applied); undefined for a kind without one.
   */
  probeBatch(
    items: readonly { spec: EffectSpecBase; key: string; since: number }[],
    simulate: boolean,
  ): Promise<Map<string, ProbeResult> | undefined>;
  /** The keys present at the spec's target (the kind's `scan`), or undefined without one. */
  scan(spec: EffectSpecBase): Promise<Map<string, string[]> | undefined>;
  /** Closes what `open` built (and the host, when it is the kind's own). */
  close(): Promise<void>;
}

/**
 * Hosts one kind as idem's interpreter does, for its tests, the conformance drill and idem's own
 * effects host (one host, every kind of a config): options parsed, its resource opened on first
 * use (once; a failed `open` is tried again next time, a credential set meanwhile), probe and
 * apply called with the key, the output's recording time (`since`, default now) and its resource.
 * Never retries a probe or an apply.
 * @throws IdemError INVALID_CONFIG when the options do not parse; a credential unset, at first use.
 */
export function openKind(kind: AnyEffectKind, options: OpenKindOptions = {}): OpenedKind {
  const parsed = parseKindOptions(kind, options.options, {
    ...(options.dir === undefined ? {} : { dir: options.dir }),
    ...(options.optionsAt === undefined ? {} : { at: options.optionsAt }),
  });
  const context = kindContextOf(parsed, options);
  const host = options.host ?? createKindHost(options);
  const { clock } = host;
  let resource: Promise<unknown> | undefined;
  const opened = (): Promise<unknown> => {
    if (!resource) {
      const r = Promise.resolve().then(() =>
        kind.open ? kind.open(host.openContext(kind, context)) : undefined,
      );
      r.catch(() => {
        if (resource === r) resource = undefined;
      });
      resource = r;
    }
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
  const probe: OpenedKind["probe"] = async (spec, key, call = {}) =>
    kind.probe(spec, await base(key, call.since, call.hint));
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
    probe,
    async apply(spec, key, call = {}) {
      return kind.apply(spec, {
        ...(await base(key, call.since, call.hint)),
        probed: call.probed,
        order: call.order,
      });
    },
    async probeBatch(items, simulate) {
      if (!kind.probeBatch) return undefined;
      return kind.probeBatch(items, {
        ...context,
        resource: await opened(),
        simulate,
        probeOne: (spec, key, since) => probe(spec, key, { since }),
        clock,
      });
    },
    async scan(spec) {
      if (!kind.scan) return undefined;
      return kind.scan.keys(spec, { ...context, resource: await opened(), clock });
    },
    async close() {
      const r = resource;
      resource = undefined;
      const value = r === undefined ? undefined : await r.catch(() => undefined);
      try {
        if (r !== undefined && value !== undefined) await kind.close?.(value);
      } finally {
        if (!options.host) await host.close();
      }
    },
  };
}
