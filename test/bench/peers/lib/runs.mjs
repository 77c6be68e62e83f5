// One run of one system: started and warmed up (one job through, untimed), then every job handed
// in at once and timed from the start of the submission until the last job's commit is on `main`
// (polled with `git rev-list --count` every 100 ms, the same for every system); then the repository
// audited and the system's own final state read. The crash run does the same with SIGKILLs of the
// system's worker processes at random moments, then waits until every job has settled.

import { treeCpuSeconds } from "./cpu.mjs";
import { sleep, waitFor } from "./procs.mjs";
import { auditRepo, commitCount, jobId, jobIds } from "./workload.mjs";

const WARM = jobId(0, "warm");
const now = () => performance.now();

/** Starts `sys` and puts one job through it (untimed): processes up, caches warm. */
async function warmUp(sys) {
  await sys.start();
  await sys.submit([WARM]);
  await waitFor(
    `${sys.label}: the warm-up job's commit`,
    async () => (await commitCount(sys.repo)) >= 2,
    {
      timeoutMs: 120_000,
      everyMs: 100,
    },
  );
}

/**
 * Waits until `sys` has settled `total` jobs (its own state) or has made no progress for `stallMs`.
 * @returns {Promise<{ state: object, settledAt: number | null }>}
 */
async function settle(sys, total, stallMs, everyMs = 1000) {
  let last = -1;
  let lastCommits = -1;
  let progressAt = now();
  for (;;) {
    const state = await sys.state(total);
    const commits = await commitCount(sys.repo);
    if (state.settled >= total) return { state, settledAt: now() };
    if (state.settled !== last || commits !== lastCommits) {
      last = state.settled;
      lastCommits = commits;
      progressAt = now();
    } else if (now() - progressAt > stallMs) {
      return { state, settledAt: null };
    }
    await sleep(everyMs);
  }
}

/**
 * The CPU seconds `sys` has used so far: its processes' trees (sys.cpuRoots(): the PIDs it started,
 * the bench's PostgreSQL server for a system whose state is there) plus its short processes that
 * have ended (sys.cpuCounted()). Null for a system that does not say.
 */
function cpuNow(sys) {
  if (!sys.cpuRoots) return null;
  return treeCpuSeconds(sys.cpuRoots()) + (sys.cpuCounted?.() ?? 0);
}

/** The CPU seconds of each of `sys`'s named parts (sys.cpuParts(): name -> PIDs), if it names them. */
function cpuPartsNow(sys) {
  if (!sys.cpuParts) return null;
  const parts = Object.entries(sys.cpuParts()).map(([k, pids]) => [k, treeCpuSeconds(pids)]);
  return Object.fromEntries([...parts, ["submission", sys.cpuCounted?.() ?? 0]]);
}

/**
 * A timed run of `n` jobs through `sys`; `cpuPerJobMs` is the CPU its processes used from the start
 * of the submission until the last commit, over `n`.
 * @returns {Promise<{ rate: number | null, seconds: number | null, audit: object, state: object,
 *   inflightMax: number | null, error: string | null }>}
 */
export async function throughputRun(sys, { n, stallMs = 60_000 }) {
  const ids = jobIds(n);
  try {
    await warmUp(sys);
    const target = n + 2; // the seed and the warm-up commits
    const cpu0 = cpuNow(sys);
    const parts0 = cpuPartsNow(sys);
    const t0 = now();
    let submitError = null;
    const submitting = sys.submit(ids).catch((e) => {
      submitError = e;
    });
    let seen = 0;
    let seenAt = now();
    for (;;) {
      const c = await commitCount(sys.repo);
      if (c >= target) break;
      if (submitError) throw submitError;
      if (c !== seen) [seen, seenAt] = [c, now()];
      else if (now() - seenAt > stallMs)
        throw new Error(`no commit for ${stallMs / 1000} s at ${c - 2}/${n}`);
      await sleep(100);
    }
    const seconds = (now() - t0) / 1000;
    await submitting;
    const cpu1 = cpuNow(sys);
    const cpuPerJobMs = cpu0 === null || cpu1 === null ? null : (1000 * (cpu1 - cpu0)) / n;
    const parts1 = cpuPartsNow(sys);
    const cpuPartsMs = parts0
      ? Object.fromEntries(
          Object.keys(parts0).map((k) => [k, (1000 * (parts1[k] - parts0[k])) / n]),
        )
      : null;
    const audit = await auditRepo(sys.repo, ids);
    const { state } = await settle(sys, n + 1, 30_000, 250);
    return {
      rate: n / seconds,
      seconds,
      cpuPerJobMs,
      cpuPartsMs,
      audit,
      state,
      inflightMax: sys.inflightMax?.() ?? null,
      error: null,
    };
  } catch (e) {
    return {
      rate: null,
      seconds: null,
      cpuPerJobMs: null,
      audit: null,
      state: null,
      inflightMax: null,
      error: e.message,
    };
  } finally {
    await sys.stop();
  }
}

/**
 * The crash run: `n` jobs handed in at once, `kills` SIGKILLs of the system's worker processes, each
 * when the commits on `main` reach a point drawn by `random` (between 5% and 90% of `n`, a moment
 * drawn from 0-200 ms later), or 60 s after the previous kill when the commits stop moving; the
 * supervisor starts the killed process again. Then it waits until every job has settled, or until
 * nothing has moved for `stallMs`.
 */
export async function crashRun(sys, { n, kills, random, stallMs }) {
  const ids = jobIds(n);
  const points = Array.from({ length: kills }, () => Math.floor(n * (0.05 + 0.85 * random()))).sort(
    (a, b) => a - b,
  );
  const killedAt = [];
  let misses = 0;
  try {
    await warmUp(sys);
    const t0 = now();
    const submitting = sys.submit(ids).catch((e) => e);
    while (killedAt.length < kills) {
      const done = (await commitCount(sys.repo)) - 2;
      const last = killedAt.at(-1) ?? t0;
      if (done >= points[killedAt.length] || now() - last > 60_000) {
        await sleep(Math.floor(random() * 200));
        // A process still starting again after the previous kill is waited for (up to 60 s).
        if (!sys.killOne() && misses++ < 600) {
          await sleep(100);
          continue;
        }
        misses = 0;
        killedAt.push(now());
      } else {
        await sleep(50);
      }
    }
    const lastKill = killedAt.at(-1) ?? t0;
    const { state, settledAt } = await settle(sys, n + 1, stallMs);
    const submitError = await submitting;
    const audit = await auditRepo(sys.repo, ids);
    return {
      kills: killedAt.length,
      killAtCommits: points,
      restarts: sys.restarts?.() ?? null,
      audit,
      state,
      submitError: submitError instanceof Error ? submitError.message : null,
      recoverySeconds: settledAt === null ? null : (settledAt - lastKill) / 1000,
      totalSeconds: settledAt === null ? null : (settledAt - t0) / 1000,
      stallSeconds: stallMs / 1000,
      error: null,
    };
  } catch (e) {
    return { kills: killedAt.length, error: e.message };
  } finally {
    await sys.stop();
  }
}
