import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyEffectKind, OpenContext, ProbeResult } from "@idem/kit";
import {
  type Clock,
  type Config,
  type EffectSpec,
  type FaultHook,
  IdemError,
  isIdemError,
  systemClock,
} from "@idem/schema";
import type { Effects } from "./effect-handler.js";
import { GitTargets } from "./git/git-targets.js";
import { ScratchIndexes } from "./git/patch/scratch-indexes.js";
import type { CloneProgress } from "./git/remote/remote-git.js";
import { BUILT_IN_KINDS } from "./kinds/index.js";
import { PublishStreamChecks } from "./kinds/nats-publish/nats-publish-effect.js";
import { EFFECTS_SERVICES, type EffectsServices } from "./kinds/services.js";
import type { PublishTransport } from "./publish-transport.js";
import { kindContext, kindOf } from "./registry/check-effects.js";
import { type KindRegistry, kindRegistryOf } from "./registry/kind-registry.js";

/**
 * git effects are durable unless told otherwise: chosen from BENCHMARKS.md, where a durable
 * git.commit stays above the plain `git add` + `git commit` loop run with git's own fsync.
 */
export const GIT_DURABLE_DEFAULT = true;

/** How `createEffects` reaches its targets; every field has a default. */
export interface CreateEffectsOptions {
  /**
   * The kinds to serve (`loadKindRegistry`: idem's own and the config's `kinds`); default idem's
   * own (a config that adds kinds must pass its loaded registry).
   */
  kinds?: KindRegistry;
  /** NATS URL used when neither the publish target nor the config's `nats` section names one. */
  natsUrl?: string;
  /**
   * How nats.publish reaches its broker (@idem/nats implements it; `openEffects` of @idem/core
   * wires it). Without one, applying a nats.publish fails with INVALID_STATE after validation.
   * Not closed by `Effects.close()`: whoever created it closes it.
   */
  publishTransport?: PublishTransport;
  /** fetch for http.request and the kinds that call HTTP APIs (tests pass their own). */
  fetch?: typeof fetch;
  /** Time for commit author dates. */
  clock?: Clock;
  /**
   * fsync the git objects and refs of an effect before apply returns (default true): the ledger,
   * fsynced too, then never says `applied` for a commit a power loss can take back. false is git's
   * own default (no fsync of loose objects or refs); see docs/reliability.md, "Power loss".
   */
  durable?: boolean;
  /** How long to wait for another process's repo lock before LOCKED (default 30 s). */
  lockTimeoutMs?: number;
  /** Keep a repo's OS lock this long after an apply so a burst pays for it once (default 200 ms). */
  lockLingerMs?: number;
  /**
   * Called at the fault points inside an apply (`interpreter.after-push`: a remote git target's
   * push succeeded, nothing is recorded yet; a kind's own named points). The apps pass their
   * `IDEM_FAULT` hook; a no-op by default.
   */
  fault?: FaultHook;
  /** Progress of a first clone of a remote repo's mirror, e.g. for a line on a terminal. */
  onCloneProgress?: (progress: CloneProgress) => void;
  /** The environment credentials are read from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The effect kinds of one config behind the interface the interpreter calls. Opens nothing until
 * first use: each kind's `open` runs once, when one of its effects is first probed or applied (the
 * built-in git kinds then hold long-lived git processes and repo locks): call `close()` when done.
 * Front ends call `openEffects` of @idem/core instead, which wires the NATS transport in.
 *
 * Every apply is safe to repeat with the same key (probe first, or target dedup); validation
 * errors (SANDBOX_VIOLATION, INVALID_INPUT, UNKNOWN_ALIAS) are never worth a retry, transient ones
 * (LOCKED, UNAVAILABLE, TIMEOUT, TARGET_MOVED) are. See @idem/kit's `EffectKind` for each call.
 */
export function createEffects(config: Config, options: CreateEffectsOptions = {}): Effects {
  const registry = options.kinds ?? kindRegistryOf(config, BUILT_IN_KINDS);
  const clock = options.clock ?? systemClock;
  let tmp: Promise<string> | undefined;
  const tmpDir = () => {
    tmp ??= fs.mkdtemp(join(tmpdir(), "idem-effects-"));
    return tmp;
  };
  const services: EffectsServices = {
    git: new GitTargets(config, {
      clock,
      durable: options.durable ?? GIT_DURABLE_DEFAULT,
      lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
      lockLingerMs: options.lockLingerMs ?? 200,
      tmpDir,
      ...(options.fault ? { fault: options.fault } : {}),
      ...(options.onCloneProgress ? { onCloneProgress: options.onCloneProgress } : {}),
    }),
    scratch: new ScratchIndexes(),
    publishTransport: options.publishTransport,
    publishChecks: new PublishStreamChecks(),
    natsUrl: options.natsUrl,
  };
  const shared = new Map<string, unknown>();
  const env = options.env ?? process.env;
  const opened = new Map<string, Promise<unknown>>();
  const resourceOf = (kind: AnyEffectKind): Promise<unknown> => {
    let r = opened.get(kind.name);
    if (!r) {
      const ctx: OpenContext<unknown> = {
        ...kindContext(registry, config, kind.name),
        clock,
        fetch: options.fetch ?? globalThis.fetch,
        services: { [EFFECTS_SERVICES]: services },
        fault: (point) => options.fault?.(point as never),
        env(variable) {
          const value = env[variable];
          if (value === undefined || value === "")
            throw new IdemError(
              "INVALID_CONFIG",
              `the environment variable ${variable} is not set`,
              {
                details: { variable },
              },
            );
          return value;
        },
        shared<T>(id: string, create: () => T): T {
          if (!shared.has(id)) shared.set(id, create());
          return shared.get(id) as T;
        },
      };
      r = Promise.resolve().then(() => (kind.open ? kind.open(ctx) : undefined));
      // A kind that failed to open is opened again next time (a credential set meanwhile).
      r.catch(() => opened.delete(kind.name));
      opened.set(kind.name, r);
    }
    return r;
  };
  const ctxOf = (kind: AnyEffectKind) => kindContext(registry, config, kind.name);
  const call = async (
    kind: AnyEffectKind,
    key: string,
    since: number | undefined,
    hint?: unknown,
  ) => ({
    ...ctxOf(kind),
    key,
    resource: await resourceOf(kind),
    since: since ?? 0,
    hint: hint as never,
    clock,
  });
  const probe: Effects["probe"] = async (spec, key, o = {}) => {
    const kind = kindOf(registry, spec);
    return kind.probe(spec, await call(kind, key, o.since, o.hint));
  };

  return {
    kinds: registry,
    probe,
    async apply(spec, key, o = {}) {
      const kind = kindOf(registry, spec);
      return kind.apply(spec, {
        ...(await call(kind, key, o.since, o.hint)),
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
        const probeOne = (spec: EffectSpec, key: string, since: number) =>
          probe(spec, key, { since });
        if (!kind.probeBatch) {
          for (const it of group) {
            try {
              out.set(it.key, await probeOne(it.spec, it.key, it.since));
            } catch (e) {
              if (!isIdemError(e) || e.class !== "validation") throw e;
              out.set(it.key, { status: "conflict", reason: `${e.code}: ${e.message}` });
            }
          }
          continue;
        }
        const answered = await kind.probeBatch(group, {
          ...ctxOf(kind),
          resource: await resourceOf(kind),
          simulate,
          probeOne,
          clock,
        });
        for (const [k, r] of answered) out.set(k, r);
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
    async scan(spec) {
      const kind = kindOf(registry, spec);
      if (!kind.scan) return undefined;
      return kind.scan.keys(spec, { ...ctxOf(kind), resource: await resourceOf(kind), clock });
    },

    async close() {
      const resources = [...opened.entries()];
      opened.clear();
      for (const [name, r] of resources) {
        const kind = registry.get(name);
        const resource = await r.catch(() => undefined);
        if (resource !== undefined) await kind?.close?.(resource);
      }
      services.git.close();
      services.publishChecks.clear();
      if (tmp) {
        const dir = await tmp.catch(() => undefined);
        tmp = undefined;
        if (dir) await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
