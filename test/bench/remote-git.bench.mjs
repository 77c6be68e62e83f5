// git.commit effects to a repository on a server: idem's interpreter (claim, probe, intent, push,
// settle per output, journal synchronous FULL, a per-host mirror pushing by compare-and-swap) next to
// the raw loop a person would write, `git add` + `git commit` + `git push` in bash, against the same
// kind of remote (a bare repository served by `git daemon` on loopback, and one over file://), in
// interleaved rounds; with the default pipeline and with `interpreter.pipeline: 1`.
// Usage: npm run build && node test/bench/remote-git.bench.mjs [--n 60]
// (BENCH_QUICK=1: a smoke run). Prints one JSON object to stdout (see run.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openEffects } from "@idem/core";
import { effectTargetsOf } from "@idem/effects";
import { createInterpreter } from "@idem/interpreter";
import { openSqliteJournal } from "@idem/journal";
import { defaultConfig, parseConfig } from "@idem/schema";
import { pino } from "pino";
import { createBareRepo, startGitDaemon } from "../../packages/testing/dist/index.js";
import { interleave, perSec, report, row, size } from "./lib/measure.mjs";
import { GIT_ENV } from "./lib/plain.mjs";

const N = size("n", 60, 10);
const PIPELINE = defaultConfig("/").interpreter.pipeline;
const root = mkdtempSync(join(tmpdir(), "idem-remote-bench-"));
const git = (cwd, ...args) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

/**
 * The raw loop, timed inside bash with $EPOCHREALTIME: a clone of the remote made before the timer,
 * then per commit one new file, `git add`, `git commit -q`, `git push -q origin HEAD:main`.
 */
const RAW_LOOP = `set -euo pipefail
url=$1 work=$2 count=$3
git -c maintenance.auto=false clone -q "$url" "$work"
cd "$work"
t0=$EPOCHREALTIME
for ((i = 0; i < count; i++)); do
  echo "$i" >"f$i.txt"
  git -c maintenance.auto=false add "f$i.txt"
  git -c maintenance.auto=false commit -q -m "raw $i"
  git -c maintenance.auto=false push -q origin HEAD:main
done
t1=$EPOCHREALTIME
echo $((\${t1/./} - \${t0/./}))`;

const daemon = await startGitDaemon();
let seq = 0;
/** A fresh bare repository (branch main, one seed commit) on the daemon or on disk: its URL. */
function newRemote(kind) {
  const name = `r${seq++}`;
  if (kind === "git") return daemon.createRepo(name).url;
  const path = join(root, `${name}.git`);
  createBareRepo(path);
  return `file://${path}`;
}

function raw(kind) {
  const out = execFileSync(
    "bash",
    ["-c", RAW_LOOP, "raw", newRemote(kind), join(root, `w${seq++}`), String(N)],
    {
      env: GIT_ENV,
      encoding: "utf8",
    },
  );
  return perSec(N, Number(out.trim()) / 1000);
}

/**
 * idem: N outputs of one git.commit each, recorded in a fresh journal before the timer, then the
 * interpreter's `drain()` (the work of `idem interpreter --once`) timed until every run is done. The
 * mirror is made before the timer (one probe), as the raw side's clone is.
 */
async function idem(kind, pipeline) {
  const dir = join(root, `w${seq++}`);
  mkdirSync(dir);
  const mirror = join(dir, "mirror.git");
  const parsed = parseConfig(
    {
      journal: { path: "journal.db", synchronous: "FULL" },
      repos: { site: { url: newRemote(kind), cacheDir: mirror, branch: "main" } },
      interpreter: { pipeline },
    },
    { dir },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const journal = await openSqliteJournal(config.journal.path, { synchronous: "FULL" });
  const effects = openEffects(config);
  const spec = (i) => ({
    kind: "git.commit",
    repo: "site",
    message: `idem ${i}`,
    files: [{ path: `f${i}.txt`, content: `${i}\n` }],
  });
  await effects.probe(spec(-1), "bench-warm/0");
  for (let i = 0; i < N; i++) {
    const output = { jobId: `bench-${i}`, agent: "bench", effects: [spec(i)] };
    await journal.outputs.record(output, {
      source: "bench",
      targets: effectTargetsOf(output, config),
    });
  }
  const interpreter = createInterpreter({
    config,
    journal,
    effects,
    logger: pino({ level: "silent" }),
  });
  const t0 = performance.now();
  const { runs } = await interpreter.drain();
  const rate = perSec(N, performance.now() - t0);
  await effects.close();
  await journal.close();
  if (runs.done !== N) throw new Error(`idem finished ${runs.done} runs, not ${N}`);
  const keys = git(mirror, "log", "--format=%B", "main").match(/^Idem-Effect: /gm) ?? [];
  if (keys.length !== N) throw new Error(`idem left ${keys.length} commits, not ${N}`);
  return rate;
}

try {
  const daemonRounds = await interleave("git daemon", {
    raw: async () => raw("git"),
    pipelined: () => idem("git", PIPELINE),
    one: () => idem("git", 1),
  });
  const fileRounds = await interleave("file://", {
    raw: async () => raw("file"),
    pipelined: () => idem("file", PIPELINE),
    one: () => idem("file", 1),
  });
  const loop = (url) => `bash -c '<the loop below>' raw ${url} WORK ${N}`;
  const unit = "commits/s";
  const rows = (where, rounds, url) => [
    row({
      metric: `the interpreter: ${N} outputs of one branch, to ${where} (pipeline ${PIPELINE}, the default)`,
      unit,
      idem: rounds.pipelined,
      base: rounds.raw,
      baseline: loop(url),
      target: { min: 2 },
    }),
    row({
      metric: `the same with interpreter.pipeline 1 (one run of the branch at a time)`,
      unit,
      idem: rounds.one,
      base: rounds.raw,
      baseline: loop(url),
      note: "one ls-remote and one push per output",
    }),
  ];
  report({
    name: "remote-git",
    command: `node test/bench/remote-git.bench.mjs --n ${N}`,
    results: [
      ...rows("git daemon on loopback", daemonRounds, "git://127.0.0.1:PORT/rN.git"),
      ...rows("a file:// bare repository", fileRounds, "file:///tmp/.../rN.git"),
    ],
    notes: [
      `Each round: ${N} commits per side, each side on a fresh bare repository (branch main, one seed commit) served by \`git daemon --enable=receive-pack\` on 127.0.0.1, or reached over file://. The raw side clones it before its timer; idem records the ${N} outputs in a fresh journal and makes its mirror (one probe) before its timer.`,
      `The raw loop (timed inside bash with $EPOCHREALTIME): \`for i: echo $i > f$i.txt; git add f$i.txt; git commit -q -m "raw $i"; git push -q origin HEAD:main\`, each git with \`-c maintenance.auto=false\`, as idem runs git.`,
      "idem: `createInterpreter(...).drain()` in process (what `idem interpreter --once` runs), journal synchronous FULL: per output a claim, a probe (one `git ls-remote` of the branch, shared by the probes asking at the same moment; a fetch only when the tip is a commit the mirror lacks), an intent, the apply and the settle. The apply builds the commit in process in the mirror and pushes by compare-and-swap (`--force-with-lease=refs/heads/main:<tip>`); it answers once the push succeeded. With the pipeline, the runs that follow the one in flight are claimed and probed meanwhile, and their commits, built on each other in recording order, go out together in the next push.",
      "The mirror's commits are not fsynced: the remote holds what was applied (the raw loop's push does not fsync the remote either).",
    ],
  });
} finally {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
}
