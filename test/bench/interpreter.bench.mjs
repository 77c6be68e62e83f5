// The interpreter end to end: git.commit effects per second through claim, probe, intent, apply,
// settle and complete (journal synchronous FULL, git effects with the default durability), in
// process, next to the plain-tool loop in bash (`git add` + `git commit`, timed inside bash) on the
// same kind of repo, in interleaved rounds; with and without git's own fsync on the plain side.
// Usage: npm run build && node test/bench/interpreter.bench.mjs [--n 1000]   (BENCH_QUICK=1: smoke)
// Prints one JSON object to stdout (see run.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter } from "@idem/interpreter";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { pino } from "pino";
import { figure, interleave, perSec, ROUNDS, report, row, size } from "./lib/measure.mjs";
import { bash, GIT_ENV, GIT_FSYNC, script } from "./lib/plain.mjs";

const N = size("n", 1000, 60);
const PER = Math.ceil(N / ROUNDS);
const WARM = Math.min(30, PER);
const root = mkdtempSync(join(tmpdir(), "idem-interpreter-bench-"));
const git = (cwd, ...args) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

let seq = 0;
function newRepo() {
  const dir = join(root, `r${seq++}`);
  mkdirSync(dir);
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "bench\n");
  git(dir, "add", "README.md");
  git(dir, "commit", "-qm", "seed");
  return dir;
}

/** A plain loop on its own repo: each call commits `k` more files and answers commits/s. */
function plainLoop(gitArgs = []) {
  const repo = newRepo();
  let next = 0;
  return (k) => {
    const [us] = bash("git-commit-loop.sh", [repo, next, k, ...gitArgs]);
    next += k;
    return perSec(k, us / 1000);
  };
}

/** The interpreter on a fresh journal holding `n` outputs of one git.commit each. */
async function idemLoop(n) {
  const dir = join(root, `w${seq++}`);
  mkdirSync(dir);
  const repo = newRepo();
  const parsed = parseConfig(
    { repos: { site: { path: repo } }, journal: { path: "journal.db", synchronous: "FULL" } },
    { dir },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const journal = await openSqliteJournal(config.journal.path, { synchronous: "FULL" });
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const output = {
      jobId: `bench-${i}`,
      agent: "bench",
      effects: [
        {
          kind: "git.commit",
          repo: "site",
          message: `idem ${i}`,
          files: [{ path: `f${i}.txt`, content: `${i}\n` }],
        },
      ],
    };
    await journal.outputs.record(output, {
      source: "bench",
      targets: effectTargetsOf(output, config),
    });
  }
  const recordRate = perSec(n, performance.now() - t0);
  const effects = openEffects(config);
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    logger: pino({ level: "silent" }),
  });
  let done = 0;
  return {
    recordRate,
    async step(k) {
      const t = performance.now();
      for (let i = 0; i < k; i++) {
        const r = await interpreter.runOnce();
        if (r?.outcome !== "done") throw new Error(`run ${done + i}: ${JSON.stringify(r)}`);
      }
      done += k;
      return perSec(k, performance.now() - t);
    },
    async close() {
      const commits = Number(git(repo, "rev-list", "--count", "main")) - 1;
      if (commits !== done) throw new Error(`${commits} commits for ${done} effects`);
      await effects.close();
      await journal.close();
    },
  };
}

try {
  const idem = await idemLoop(PER * ROUNDS + WARM);
  const plain = plainLoop();
  const plainFsync = plainLoop(GIT_FSYNC);
  const rounds = await interleave("interpreter", {
    plain: async (r) => plain(r < 0 ? WARM : PER),
    idem: (r) => idem.step(r < 0 ? WARM : PER),
    plainFsync: async (r) => plainFsync(r < 0 ? WARM : PER),
  });
  await idem.close();
  const loop = (extra) =>
    `\`bash ${script("git-commit-loop.sh")} REPO FROM ${PER}${extra}\` (FROM: where the last round stopped; the repo carries on)`;
  report({
    name: "interpreter",
    command: `node test/bench/interpreter.bench.mjs --n ${N}`,
    results: [
      row({
        metric: `git.commit effects/s end to end (claim, probe, intent, apply, settle, complete; journal FULL; git durable, the default)`,
        unit: "effects/s",
        idem: rounds.idem,
        base: rounds.plain,
        baseline: loop(""),
        target: { min: 0.8 },
      }),
      row({
        metric: "the same, against the plain loop with git's fsync (the same durability for git)",
        unit: "effects/s",
        idem: rounds.idem,
        base: rounds.plainFsync,
        baseline: loop(` ${GIT_FSYNC.join(" ")}`),
      }),
      figure({
        metric:
          "journal.record of the same outputs (before the rounds; not part of the figures above)",
        unit: "outputs/s",
        values: [idem.recordRate],
      }),
    ],
    notes: [
      `${ROUNDS} interleaved rounds of ${PER} effects per side after a warm-up of ${WARM}; each side goes on in its own repo (checked out, one branch) from round to round. idem: \`interpreter.runOnce()\` in one Node process on a journal holding one recorded output per effect, timed in Node. Plain tool: the bash loop printed as the baseline, timed inside bash (no process start on either side; the whole-process table has those).`,
    ],
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
