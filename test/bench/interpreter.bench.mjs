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
import { createEffects } from "@idem/effects";
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

async function rawCommitLoop(n) {
  const repo = newRepo();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    writeFileSync(join(repo, `f${i}.txt`), `${i}\n`);
    await execFile("git", ["add", `f${i}.txt`], { cwd: repo, env: ENV });
    await execFile("git", ["commit", "-q", "-m", `raw ${i}`], { cwd: repo, env: ENV });
  }
  return perSec(n, performance.now() - t0);
}

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
    await journal.record(output, { source: "bench", targets: effectTargets(output, config) });
  }
  const recordMs = performance.now() - tr;
  const effects = createEffects(config);
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    logger: pino({ level: "silent" }),
  });
  const t0 = performance.now();
  const result = await interpreter.drain();
  const ms = performance.now() - t0;
  if (result.runs.done !== n) throw new Error(`only ${result.runs.done} of ${n} runs done`);
  const commits = Number(git(repo, "rev-list", "--count", "main")) - 1;
  if (commits !== n) throw new Error(`${commits} commits for ${n} effects`);
  await effects.close();
  await journal.close();
  return { rate: perSec(n, ms), recordRate: perSec(n, recordMs) };
}

// Warm up both sides, then raw, idem, raw: the ratio uses the mean of the two raw loops around it.
await rawCommitLoop(Math.min(50, N));
await idemLoop(Math.min(50, N));
const raw1 = await rawCommitLoop(N);
const idem = await idemLoop(N);
const raw2 = await rawCommitLoop(N);
const raw = (raw1 + raw2) / 2;
rmSync(root, { recursive: true, force: true });

const r3 = (x) => +x.toFixed(3);
process.stdout.write(
  `${JSON.stringify(
    {
      name: "interpreter",
      command: `node test/bench/interpreter.bench.mjs --n ${N}`,
      results: [
        {
          metric: `git.commit effects/s end to end (${N} runs: claim, probe, intent, apply, settle, complete; journal FULL)`,
          value: r3(idem.rate),
          unit: "effects/s",
          raw: r3(raw),
          ratio: r3(idem.rate / raw),
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
      notes: [`raw loops: ${r3(raw1)} and ${r3(raw2)} commits/s (before and after the idem run)`],
    },
    null,
    2,
  )}\n`,
);
