// idem interpreter benchmark: git.commit effects per second end to end (claim, probe, intent, apply,
// settle, complete: journal included, synchronous FULL) next to a raw `git add && git commit` loop
// on the same kind of repo in the same run.
// Usage: npx tsc -b apps/interpreter && node test/bench/interpreter.bench.mjs [--n 1000]
// Prints one JSON object to stdout.
import { execFile as execFileCb, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { openTargets } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { openJournal } from "@idem/journal";
import { effectTargets, parseConfig } from "@idem/schema";
import { pino } from "pino";

const execFile = promisify(execFileCb);
const argN = process.argv.indexOf("--n");
const N = argN > 0 ? Number(process.argv[argN + 1]) : 1000;
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@x",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@x",
};
const root = mkdtempSync(join(tmpdir(), "idem-interpreter-bench-"));
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: ENV, encoding: "utf8" }).trim();

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
const perSec = (n, ms) => (n * 1000) / ms;

/** A raw porcelain commit loop on its own repo; `step(k)` makes k more commits and returns the ms spent. */
function rawLoop() {
  const repo = newRepo();
  let i = 0;
  return async (k) => {
    const t0 = performance.now();
    for (const end = i + k; i < end; i++) {
      writeFileSync(join(repo, `f${i}.txt`), `${i}\n`);
      await execFile("git", ["add", `f${i}.txt`], { cwd: repo, env: ENV });
      await execFile("git", ["commit", "-q", "-m", `raw ${i}`], { cwd: repo, env: ENV });
    }
    return performance.now() - t0;
  };
}

/** The interpreter on a fresh journal holding `n` outputs of one git.commit each; `step(k)` interprets k runs. */
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
  const journal = await openJournal(config.journal.path, { synchronous: "FULL" });
  const tr = performance.now();
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
      targets: effectTargets(output, config),
    });
  }
  const recordRate = perSec(n, performance.now() - tr);
  const effects = openTargets(config);
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
      const t0 = performance.now();
      for (let i = 0; i < k; i++) {
        const r = await interpreter.runOnce();
        if (r?.outcome !== "done") throw new Error(`run ${done + i}: ${JSON.stringify(r)}`);
      }
      done += k;
      return performance.now() - t0;
    },
    async close() {
      const commits = Number(git(repo, "rev-list", "--count", "main")) - 1;
      if (commits !== done) throw new Error(`${commits} commits for ${done} effects`);
      await effects.close();
      await journal.close();
    },
  };
}

// Warm up both sides, then interleave rounds so that the machine's drift hits both alike.
const ROUNDS = 5;
const per = Math.ceil(N / ROUNDS);
await rawLoop()(Math.min(30, N));
const warm = await idemLoop(Math.min(30, N));
await warm.step(Math.min(30, N));
await warm.close();
const raw = rawLoop();
const idem = await idemLoop(per * ROUNDS);
let rawMs = 0;
let idemMs = 0;
const rounds = [];
for (let r = 0; r < ROUNDS; r++) {
  const a = await raw(per);
  const b = await idem.step(per);
  rawMs += a;
  idemMs += b;
  rounds.push(`${perSec(per, b).toFixed(1)}/${perSec(per, a).toFixed(1)}`);
}
await idem.close();
rmSync(root, { recursive: true, force: true });
const idemRate = perSec(per * ROUNDS, idemMs);
const rawRate = perSec(per * ROUNDS, rawMs);

const r3 = (x) => +x.toFixed(3);
process.stdout.write(
  `${JSON.stringify(
    {
      name: "interpreter",
      command: `node test/bench/interpreter.bench.mjs --n ${N}`,
      results: [
        {
          metric: `git.commit effects/s end to end (${N} runs: claim, probe, intent, apply, settle, complete; journal FULL)`,
          value: r3(idemRate),
          unit: "effects/s",
          raw: r3(rawRate),
          ratio: r3(idemRate / rawRate),
          target: ">= 0.8x raw git add + git commit loop",
        },
        {
          metric: "journal.record of the same outputs (not part of the figure above)",
          value: r3(idem.recordRate),
          unit: "outputs/s",
          raw: null,
          ratio: null,
          target: null,
        },
      ],
      notes: [
        `${ROUNDS} interleaved rounds of ${per}, idem/raw per second: ${rounds.join(", ")}`,
        "raw: `git add` + `git commit -q` per file via execFile, the same kind of repo (checked out, one branch)",
      ],
    },
    null,
    2,
  )}\n`,
);
