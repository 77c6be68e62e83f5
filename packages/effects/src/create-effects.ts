import {
  type AnyEffectKind,
  createKindHost,
  type KindProgress,
  type OpenedKind,
  openKind,
  type ProbeResult,
} from "@idem/kit";
import {
  type Clock,
  type Config,
  type EffectSpec,
  type FaultHook,
  type FaultPoint,
  isIdemError,
} from "@idem/schema";
import type { Effects } from "./effects.js";
import { BUILT_IN_KINDS } from "./kinds/index.js";
import { kindOf } from "./registry/check-effects.js";
import { type KindRegistry, kindRegistryOf } from "./registry/kind-registry.js";

/** How `createEffects` hosts its kinds; every field has a default. */
export interface CreateEffectsOptions {
  /**
   * The kinds to serve (`loadKindRegistry`: idem's own and the config's `kinds`); default idem's
   * own built with their defaults (a config that adds kinds must pass its loaded registry).
   */
  kinds?: KindRegistry;
  /** fetch for the kinds that call HTTP APIs (tests pass their own). */
  fetch?: typeof fetch;
  clock?: Clock;
  /**
   * Called at the fault points inside an apply (a kind's own named points, and idem's own a
   * built-in kind reaches: `interpreter.after-push`). The apps pass their `IDEM_FAULT` hook; a
   * no-op by default.
   */
  fault?: FaultHook;
  /** The progress of a kind's long preparation (a first clone of a remote's mirror), e.g. for a terminal. */
  onProgress?: (kind: string, progress: KindProgress) => void;
  /** The environment credentials are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The effect kinds of one config behind the interface the interpreter calls: one kind host (the
 * kit's, as a kind's own tests use) on which each kind is opened with `openKind` on first use (its
 * `open` runs then, once; the built-in git kinds then hold long-lived git processes and repo
 * locks): call `close()` when done. Front ends call `openEffects` of @idem/core, which loads the
 * kinds with their NATS transport.
 *
 * Every apply is safe to repeat with the same key (probe first, or target dedup); validation
 * errors (SANDBOX_VIOLATION, INVALID_INPUT, UNKNOWN_ALIAS) are never worth a retry, transient ones
 * (LOCKED, UNAVAILABLE, TIMEOUT, TARGET_MOVED) are. See @idem/kit's `EffectKind` for each call.
 */
export function createEffects(config: Config, options: CreateEffectsOptions = {}): Effects {
  const registry = options.kinds ?? kindRegistryOf(config, BUILT_IN_KINDS);
  const host = createKindHost({
    ...(options.env ? { env: options.env } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    fault: (point) => options.fault?.(point as FaultPoint),
  });
  const opened = new Map<string, OpenedKind>();
  const openedOf = (kind: AnyEffectKind): OpenedKind => {
    let k = opened.get(kind.name);
    if (!k) {
      const source = registry.source(kind.name);
      k = openKind(kind, {
        host,
        options: source?.raw,
        ...(source?.at ? { optionsAt: source.at } : {}),
        dir: registry.dir,
        limits: registry.limits,
        ...(registry.nats ? { nats: registry.nats } : {}),
      });
      opened.set(kind.name, k);
    }
    return k;
  };
  const ctxOf = (kind: AnyEffectKind) => registry.context(kind.name);
  const probe: Effects["probe"] = async (spec, key, o = {}) => {
    const kind = kindOf(registry, spec);
    return openedOf(kind).probe(spec, key, { since: o.since ?? 0, hint: o.hint });
  };

  return {
    kinds: registry,
    probe,
    async apply(spec, key, o = {}) {
      const kind = kindOf(registry, spec);
      return openedOf(kind).apply(spec, key, {
        since: o.since ?? 0,
        hint: o.hint,
        probed: o.probed,
        order: o.order,
      });
    },
    probeable: (spec) => {
      const kind = kindOf(registry, spec);
      return kind.probeable?.(spec, ctxOf(kind)) ?? true;
    },
    targetDedup: (spec) => {
      const kind = kindOf(registry, spec);
      return kind.targetDedup?.(spec, ctxOf(kind)) ?? false;
    },
    queuedApplies: (spec) => {
      const kind = kindOf(registry, spec);
      return kind.queuedApplies?.(spec, ctxOf(kind)) ?? false;
    },

    async probeBatch(items, opts = {}) {
      const simulate = opts.simulate === true;
      const out = new Map<string, ProbeResult>();
      // Items grouped by the batch function they go to and its target, in recording order.
      const groups = new Map<
        string,
        { kind: AnyEffectKind; items: { spec: EffectSpec; key: string; since: number }[] }
      >();
      const fns = new Map<unknown, number>();
      for (const { spec, key, since } of items) {
        const kind = kindOf(registry, spec);
        const ctx = ctxOf(kind);
        if (!(kind.probeable?.(spec, ctx) ?? true)) continue;
        const fn = kind.probeBatch ?? kind;
        if (!fns.has(fn)) fns.set(fn, fns.size);
        const id = `${fns.get(fn)}\n${kind.batchTarget?.(spec, ctx) ?? kind.name}`;
        let g = groups.get(id);
        if (!g) {
          g = { kind, items: [] };
          groups.set(id, g);
        }
        g.items.push({ spec, key, since: since ?? 0 });
      }
      for (const { kind, items: group } of groups.values()) {
        const answered = await openedOf(kind).probeBatch(group, simulate);
        if (answered) {
          for (const [k, r] of answered) out.set(k, r);
          continue;
        }
        for (const it of group) {
          try {
            out.set(it.key, await probe(it.spec, it.key, { since: it.since }));
          } catch (e) {
            if (!isIdemError(e) || e.class !== "validation") throw e;
            out.set(it.key, { status: "conflict", reason: `${e.code}: ${e.message}` });
          }
        }
      }
      return out;
    },

    batchTarget(spec) {
      const kind = kindOf(registry, spec);
      return kind.probeBatch ? (kind.batchTarget?.(spec, ctxOf(kind)) ?? kind.name) : undefined;
    },
    configuredScans() {
      return registry.kinds.flatMap((kind) => [...(kind.scan?.configured?.(ctxOf(kind)) ?? [])]);
    },
    scanTarget(spec) {
      const kind = kindOf(registry, spec);
      return kind.scan?.target(spec, ctxOf(kind));
    },
    scan: (spec) => openedOf(kindOf(registry, spec)).scan(spec),

    async close() {
      const all = [...opened.values()];
      opened.clear();
      try {
        for (const k of all) await k.close();
      } finally {
        await host.close();
      }
    },
  };
}
