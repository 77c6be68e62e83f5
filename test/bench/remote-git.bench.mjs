// git.commit effects to a repository on a server: idem (probe + apply per effect in process,
// `createEffects` from packages/effects/dist, a per-host mirror pushing by compare-and-swap) next to
// the raw loop a person would write, `git add` + `git commit` + `git push` in bash, against the same
// kind of remote (a bare repository served by `git daemon` on loopback, and one over file://), in
// interleaved rounds.
// Usage: npm run build && node test/bench/remote-git.bench.mjs [--n 60] [--burst 8]
// (BENCH_QUICK=1: a smoke run). Prints one JSON object to stdout (see run.mjs).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "@idem/schema";
import { createEffects } from "../../packages/effects/dist/index.js";
import { createBareRepo, startGitDaemon } from "../../packages/testing/dist/index.js";
import { interleave, perSec, report, row, size } from "./lib/measure.mjs";
import { GIT_ENV } from "./lib/plain.mjs";

const N = size("n", 60, 10);
const BURST = size("burst", 8, 4);
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
 * idem: N git.commit effects, `inFlight` at a time (1: one after the other, as the interpreter
 * applies the runs of one branch; more: as concurrent callers on one branch do, whose commits are
 * pushed together per burst, each apply answering only once its push succeeded). The mirror is
 * made before the timer, as the raw side's clone is.
 */
async function idem(kind, inFlight) {
  const config = defaultConfig(root);
  const mirror = join(root, `m${seq++}.git`);
  config.repos.site = {
    url: newRemote(kind),
    cacheDir: mirror,
    path: mirror,
    branch: "main",
    branches: [],
    author: { name: "idem", email: "idem@localhost" },
  };
  const fx = createEffects(config);
  const spec = (i) => ({
    kind: "git.commit",
    repo: "site",
    message: `idem ${i}`,
    files: [{ path: `f${i}.txt`, content: `${i}\n` }],
  });
  await fx.probe(spec(-1), "bench-warm/0");
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < N; i = next++) {
      const s = spec(i);
      const p = await fx.probe(s, `bench-r/${i}`);
      await fx.apply(s, `bench-r/${i}`, p);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: inFlight }, worker));
  const rate = perSec(N, performance.now() - t0);
  await fx.close();
  const keys = git(mirror, "log", "--format=%B", "main").match(/^Idem-Effect: /gm) ?? [];
  if (keys.length !== N) throw new Error(`idem left ${keys.length} commits, not ${N}`);
  return rate;
}

try {
  const daemonRounds = await interleave("git daemon", {
    raw: async () => raw("git"),
    burst: () => idem("git", BURST),
    one: () => idem("git", 1),
  });
  const fileRounds = await interleave("file://", {
    raw: async () => raw("file"),
    burst: () => idem("file", BURST),
    one: () => idem("file", 1),
  });
  const loop = (url) => `bash -c '<the loop below>' raw ${url} WORK ${N}`;
  const unit = "commits/s";
  report({
    name: "remote-git",
    command: `node test/bench/remote-git.bench.mjs --n ${N} --burst ${BURST}`,
    results: [
      row({
        metric: `git.commit to git daemon on loopback, ${BURST} effects in flight (pushed per burst)`,
        unit,
        idem: daemonRounds.burst,
        base: daemonRounds.raw,
        baseline: loop("git://127.0.0.1:PORT/rN.git"),
        target: { min: 2 },
      }),
      row({
        metric: "git.commit to git daemon on loopback, one effect at a time",
        unit,
        idem: daemonRounds.one,
        base: daemonRounds.raw,
        baseline: loop("git://127.0.0.1:PORT/rN.git"),
        note: "as the interpreter applies the runs of one branch (in recording order, one after the other): one ls-remote and one push per effect",
      }),
      row({
        metric: `git.commit to a file:// bare repository, ${BURST} effects in flight`,
        unit,
        idem: fileRounds.burst,
        base: fileRounds.raw,
        baseline: loop("file:///tmp/.../rN.git"),
        target: { min: 2 },
      }),
      row({
        metric: "git.commit to a file:// bare repository, one effect at a time",
        unit,
        idem: fileRounds.one,
        base: fileRounds.raw,
        baseline: loop("file:///tmp/.../rN.git"),
      }),
    ],
    notes: [
      `Each round: ${N} commits per side, each side on a fresh bare repository (branch main, one seed commit) served by \`git daemon --enable=receive-pack\` on 127.0.0.1, or reached over file://. The raw side clones it before its timer, idem makes its mirror before its timer (one probe).`,
      `The raw loop (timed inside bash with $EPOCHREALTIME): \`for i: echo $i > f$i.txt; git add f$i.txt; git commit -q -m "raw $i"; git push -q origin HEAD:main\`, each git with \`-c maintenance.auto=false\`, as idem runs git.`,
      "idem: per effect one probe (one `git ls-remote` of the branch, shared by the probes asking at the same moment; a fetch only when the tip is a commit the mirror lacks) and one apply: the commit is built in process in the mirror on the probed tip and pushed with `--force-with-lease=refs/heads/main:<tip>`; the apply answers once that push succeeded. With several effects in flight, those waiting while a push is out are built on each other and go in the next push.",
      "The mirror's commits are not fsynced: the remote holds what was applied (the raw loop's push does not fsync the remote either).",
    ],
  });
} finally {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
}
