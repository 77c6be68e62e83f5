import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type Clock,
  type Config,
  type EffectKind,
  type EffectSpec,
  type FaultHook,
  IdemError,
  systemClock,
} from "@idem/schema";
import type { EffectHandler, Effects, ProbeHint, ProbeResult } from "./effect-handler.js";
import { createFileWriteHandler, fileWriteBytes } from "./file-write-effect.js";
import { createGitCommitHandler } from "./git/git-commit-effect.js";
import { createGitPatchHandler } from "./git/git-patch-effect.js";
import { type GitGroup, isValidationError, probeGitGroup } from "./git/git-probe-batch.js";
import { GitTargets } from "./git/git-targets.js";
import { ScratchIndexes } from "./git/patch/scratch-indexes.js";
import type { CloneProgress } from "./git/remote/remote-git.js";
import { createHttpRequestHandler } from "./http-request-effect.js";
import { createNatsPublishHandler, PublishStreamChecks } from "./nats-publish-effect.js";
import type { PublishTransport } from "./publish-transport.js";

/**
 * git effects are durable unless told otherwise: chosen from BENCHMARKS.md, where a durable
 * git.commit stays above the plain `git add` + `git commit` loop run with git's own fsync.
 */
export const GIT_DURABLE_DEFAULT = true;

/** How `createEffects` reaches its targets; every field has a default. */
export interface CreateEffectsOptions {
  /** NATS URL used when neither the publish target nor the config's `nats` section names one. */
  natsUrl?: string;
  /**
   * How nats.publish reaches its broker (@idem/nats implements it; `openEffects` of @idem/core
   * wires it). Without one, applying a nats.publish fails with INVALID_STATE after validation.
   * Not closed by `Effects.close()`: whoever created it closes it.
   */
  publishTransport?: PublishTransport;
  /** fetch for http.request (tests pass their own; defaults to the global fetch). */
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
   * push succeeded, nothing is recorded yet). The apps pass their `IDEM_FAULT` hook; a no-op by
   * default.
   */
  fault?: FaultHook;
  /** Progress of a first clone of a remote repo's mirror, e.g. for a line on a terminal. */
  onCloneProgress?: (progress: CloneProgress) => void;
}

/**
 * The effect kinds of one config behind the interface the interpreter calls. Opens nothing until
 * first use; then holds long-lived git processes (one `cat-file --batch` per repo, the
 * `update-ref --stdin` under a lock) and repo locks: call `close()` when done. Front ends call
 * `openEffects` of @idem/core instead, which wires the NATS transport in.
 *
 * Every apply is safe to repeat with the same key (probe first, or target dedup); validation
 * errors (SANDBOX_VIOLATION, INVALID_INPUT, UNKNOWN_ALIAS) are never worth a retry, transient ones
 * (LOCKED, UNAVAILABLE, TIMEOUT, TARGET_MOVED) are. See `EffectHandler` for each call's semantics.
 */
export function createEffects(config: Config, options: CreateEffectsOptions = {}): Effects {
  let tmp: Promise<string> | undefined;
  const tmpDir = () => {
    tmp ??= fs.mkdtemp(join(tmpdir(), "idem-effects-"));
    return tmp;
  };
  const git = new GitTargets(config, {
    clock: options.clock ?? systemClock,
    durable: options.durable ?? GIT_DURABLE_DEFAULT,
    lockTimeoutMs: options.lockTimeoutMs ?? 30_000,
    lockLingerMs: options.lockLingerMs ?? 200,
    tmpDir,
    ...(options.fault ? { fault: options.fault } : {}),
    ...(options.onCloneProgress ? { onCloneProgress: options.onCloneProgress } : {}),
  });
  const scratch = new ScratchIndexes();
  const streamChecks = new PublishStreamChecks();
  const maxFileBytes = config.limits.maxFileBytes;
  const handlers: { [K in EffectKind]: EffectHandler<Extract<EffectSpec, { kind: K }>> } = {
    "git.commit": createGitCommitHandler(git, maxFileBytes),
    "git.patch": createGitPatchHandler(git, maxFileBytes, scratch),
    "file.write": createFileWriteHandler(config),
    "nats.publish": createNatsPublishHandler(
      config,
      options.publishTransport,
      streamChecks,
      options.natsUrl,
    ),
    "http.request": createHttpRequestHandler(config, options.fetch ?? globalThis.fetch),
  };
  const handler = (kind: EffectKind): EffectHandler => {
    const h = Object.hasOwn(handlers, kind)
      ? (handlers[kind] as unknown as EffectHandler)
      : undefined;
    if (!h) throw new IdemError("INVALID_INPUT", `unknown effect kind "${String(kind)}"`);
    return h;
  };
  const of = (spec: EffectSpec) => handler(spec.kind);

  return {
    handler,
    probe: (spec, key, hint?: ProbeHint) => of(spec).probe(spec, key, hint),
    apply: (spec, key, probed, order) => of(spec).apply(spec, key, probed, order),
    probeable: (spec) => of(spec).probeable(spec),
    targetDedup: (spec) => of(spec).targetDedup(spec),
    queuedApplies: (spec) =>
      (spec.kind === "git.commit" || spec.kind === "git.patch") &&
      Object.hasOwn(config.repos, spec.repo) &&
      typeof config.repos[spec.repo]?.url === "string",

    async probeBatch(items, opts = {}) {
      const simulate = opts.simulate === true;
      const out = new Map<string, ProbeResult>();
      const gitGroups = new Map<string, GitGroup>();
      const written = new Map<string, Buffer>();
      for (const it of items) {
        const { spec, key } = it;
        if (spec.kind === "git.commit" || spec.kind === "git.patch") {
          const repo = git.get(spec.repo);
          const branch = spec.branch ?? repo.config.branch;
          const id = `${spec.repo}\n${branch}`;
          let g = gitGroups.get(id);
          if (!g) {
            g = { repo, branch, items: [] };
            gitGroups.set(id, g);
          }
          g.items.push({ spec, key });
          continue;
        }
        try {
          if (!of(spec).probeable(spec)) continue;
          if (spec.kind === "file.write" && simulate) {
            const bytes = fileWriteBytes(spec, maxFileBytes);
            const id = `${spec.root}\n${spec.path}`;
            const sim = written.get(id);
            const r: ProbeResult =
              sim === undefined
                ? await of(spec).probe(spec, key)
                : sim.equals(bytes)
                  ? { status: "present", detail: { bytes: bytes.length, simulated: true } }
                  : { status: "absent", detail: { simulated: true } };
            if (r.status === "absent") written.set(id, bytes);
            out.set(key, r);
            continue;
          }
          out.set(key, await of(spec).probe(spec, key));
        } catch (e) {
          if (!isValidationError(e)) throw e;
          out.set(key, { status: "conflict", reason: `${e.code}: ${e.message}` });
        }
      }
      const ctx = {
        scratch,
        maxFileBytes,
        simulate,
        out,
        probeOne: (spec: EffectSpec, key: string) => of(spec).probe(spec, key),
      };
      for (const g of gitGroups.values()) await probeGitGroup(g, ctx);
      return out;
    },

    async scanTrailers(repoAlias, branch) {
      const repo = git.get(repoAlias);
      return repo.trailers(branch ?? repo.config.branch);
    },

    async close() {
      git.close();
      streamChecks.clear();
      if (tmp) {
        const dir = await tmp.catch(() => undefined);
        tmp = undefined;
        if (dir) await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
