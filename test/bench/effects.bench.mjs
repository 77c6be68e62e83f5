// idem effects benchmark: git.commit and git.patch throughput next to the raw porcelain loops on
// the same kind of repo in the same run, and probe cost at 100 and 10,000 commits of history.
// Usage: npx tsc -b packages/effects && node test/bench/effects.bench.mjs [--n 150]
// Prints one JSON object to stdout.
import { execFile as execFileCb, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve as resolvePath } from "node:path";
import { promisify } from "node:util";
import { defaultConfig } from "@idem/schema";
import { createEffects } from "../../packages/effects/dist/index.js";

const execFile = promisify(execFileCb);
const argN = process.argv.indexOf("--n");
const N = argN > 0 ? Number(process.argv[argN + 1]) : 150;
// --only throughput|probe: run one half (for repeated measurements on a busy machine)
const argOnly = process.argv.indexOf("--only");
const ONLY = argOnly > 0 ? process.argv[argOnly + 1] : "all";
const argRounds = process.argv.indexOf("--rounds");
const ROUNDS = argRounds > 0 ? Number(process.argv[argRounds + 1]) : 3;
// --baseline <path to another build's dist/index.js>: measure it too, interleaved in the same run
const argBase = process.argv.indexOf("--baseline");
const baseline =
  argBase > 0 ? (await import(resolvePath(process.argv[argBase + 1]))).createEffects : null;
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@x",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@x",
};
const root = mkdtempSync(join(tmpdir(), "idem-effects-bench-"));
const git = (cwd, ...args) => execFileSync("git", args, { cwd, env: ENV, encoding: "utf8" }).trim();
const gitAsync = (cwd, args, input) => {
  const p = execFile("git", args, { cwd, env: ENV });
  if (input !== undefined) p.child.stdin.end(input);
  return p;
};

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
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perSec = (n, ms) => (n * 1000) / ms;
const newFilePatch = (i) =>
  `diff --git a/p/f${i}.txt b/p/f${i}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/p/f${i}.txt\n@@ -0,0 +1 @@\n+line ${i}\n`;

function effectsFor(repo, options = {}, impl = createEffects) {
  const config = defaultConfig(root);
  config.repos.site = {
    path: repo,
    branch: "main",
    branches: [],
    author: { name: "idem", email: "idem@localhost" },
  };
  return impl(config, options);
}

async function rawCommitLoop() {
  const repo = newRepo();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    writeFileSync(join(repo, `f${i}.txt`), `${i}\n`);
    await gitAsync(repo, ["add", `f${i}.txt`]);
    await gitAsync(repo, ["commit", "-q", "-m", `raw ${i}`]);
  }
  return perSec(N, performance.now() - t0);
}

async function idemCommitLoop(options = {}, impl = createEffects) {
  const repo = newRepo();
  const fx = effectsFor(repo, options, impl);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const spec = {
      kind: "git.commit",
      repo: "site",
      message: `idem ${i}`,
      files: [{ path: `f${i}.txt`, content: `${i}\n` }],
    };
    const p = await fx.probe(spec, `bench-c/${i}`);
    await fx.apply(spec, `bench-c/${i}`, p);
  }
  const rate = perSec(N, performance.now() - t0);
  await fx.close();
  if (git(repo, "status", "--porcelain") !== "")
    throw new Error("idem left the working tree dirty");
  return rate;
}

async function rawPatchLoop() {
  const repo = newRepo();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    await gitAsync(repo, ["apply", "--index"], newFilePatch(i));
    await gitAsync(repo, ["commit", "-q", "-m", `raw patch ${i}`]);
  }
  return perSec(N, performance.now() - t0);
}

async function idemPatchLoop(impl = createEffects) {
  const repo = newRepo();
  const fx = effectsFor(repo, {}, impl);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const spec = {
      kind: "git.patch",
      repo: "site",
      message: `idem patch ${i}`,
      patch: newFilePatch(i),
    };
    const p = await fx.probe(spec, `bench-p/${i}`);
    await fx.apply(spec, `bench-p/${i}`, p);
  }
  const rate = perSec(N, performance.now() - t0);
  await fx.close();
  return rate;
}

/** A bare repo with `n` commits carrying trailers, built by git fast-import, then indexed by one idem apply. */
async function historyRepo(n, impl) {
  const dir = join(root, `h${n}${impl === createEffects ? "" : "b"}`);
  mkdirSync(dir);
  git(dir, "init", "-q", "--bare", "-b", "main");
  let stream = "";
  for (let i = 0; i < n; i++) {
    const msg = `history ${i}\n\nIdem-Effect: hist/${i}\n`;
    const data = `${i}\n`;
    stream += `commit refs/heads/main\ncommitter b <b@x> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
    stream += `M 100644 inline f${i % 100}.txt\ndata ${Buffer.byteLength(data)}\n${data}\n`;
  }
  execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, input: stream });
  const fx = effectsFor(dir, {}, impl);
  const spec = {
    kind: "git.commit",
    repo: "site",
    message: "index",
    files: [{ path: "idx.txt", content: "i\n" }],
  };
  await fx.apply(spec, "hist-index/0"); // first apply indexes the history once (refs/idem)
  return { dir, fx };
}

async function probeCost(n, impl = createEffects) {
  const { fx, dir } = await historyRepo(n, impl);
  const absentSpec = {
    kind: "git.commit",
    repo: "site",
    message: "m",
    files: [{ path: "x.txt", content: "x\n" }],
  };
  const time = async (fn, reps) => {
    const xs = [];
    for (let i = 0; i < reps; i++) {
      const t = performance.now();
      await fn(i);
      xs.push(performance.now() - t);
    }
    return median(xs);
  };
  await fx.probe(absentSpec, "warm/0");
  const absent = await time((i) => fx.probe(absentSpec, `new/${i}`), 300);
  const recent = await time(() => fx.probe(absentSpec, `hist/${n - 1}`), 100);
  const oldest = await time(() => fx.probe(absentSpec, "hist/0"), 20);
  const batchT = performance.now();
  const items = Array.from({ length: 100 }, (_, i) => ({ spec: absentSpec, key: `hist/${i}` }));
  const fresh = effectsFor(dir, {}, impl);
  await fresh.probeBatch(items);
  const batch = performance.now() - batchT;
  await fresh.close();
  await fx.close();
  return { absent, recent, oldest, batch };
}

const results = [];
const push = (metric, value, unit, raw, ratio, target) =>
  results.push({
    metric,
    value: +value.toFixed(3),
    unit,
    raw: raw === null ? null : +raw.toFixed(3),
    ratio: ratio === null ? null : +ratio.toFixed(3),
    target,
  });

// warm-up, then interleave so drift hits both sides alike
if (ONLY !== "probe") await rawCommitLoop();
const rawC = [];
const idemC = [];
const rawP = [];
const idemP = [];
const idemDurable = [];
const baseC = [];
const baseP = [];
for (let r = 0; ONLY !== "probe" && r < ROUNDS; r++) {
  idemDurable.push(await idemCommitLoop({ durable: true }));
  rawC.push(await rawCommitLoop());
  idemC.push(await idemCommitLoop());
  rawP.push(await rawPatchLoop());
  idemP.push(await idemPatchLoop());
  if (baseline) {
    baseC.push(await idemCommitLoop({}, baseline));
    baseP.push(await idemPatchLoop(baseline));
  }
}
if (ONLY !== "probe") {
  push(
    "git.commit throughput (probe+apply, checked-out repo)",
    median(idemC),
    "commits/s",
    median(rawC),
    median(idemC) / median(rawC),
    ">= 1.0x raw write+add+commit loop",
  );
  push(
    "git.commit throughput with durable: true (fsync objects + refs)",
    median(idemDurable),
    "commits/s",
    median(rawC),
    median(idemDurable) / median(rawC),
    "informational",
  );
  push(
    "git.patch throughput (probe+apply, checked-out repo)",
    median(idemP),
    "commits/s",
    median(rawP),
    median(idemP) / median(rawP),
    ">= 1.0x raw apply --index + commit loop",
  );
  if (baseline) {
    for (const [name, xs, raw] of [
      ["git.commit", baseC, rawC],
      ["git.patch", baseP, rawP],
    ]) {
      push(
        `[baseline build] ${name} throughput`,
        median(xs),
        "commits/s",
        median(raw),
        median(xs) / median(raw),
        "same run, before/after",
      );
    }
  }
}
if (ONLY !== "throughput") {
  const p100 = await probeCost(100);
  const p10k = await probeCost(10_000);
  push(
    "probe, absent key, 10k vs 100 commits",
    p10k.absent,
    "ms",
    p100.absent,
    p10k.absent / p100.absent,
    "<= 2x",
  );
  push(
    "probe, key of the newest commit, 10k vs 100",
    p10k.recent,
    "ms",
    p100.recent,
    p10k.recent / p100.recent,
    "<= 2x",
  );
  push(
    "probe, key of the oldest commit, 10k vs 100",
    p10k.oldest,
    "ms",
    p100.oldest,
    p10k.oldest / p100.oldest,
    "informational (ancestry walk)",
  );
  push(
    "probeBatch of 100 keys, fresh process, 10k vs 100",
    p10k.batch,
    "ms",
    p100.batch,
    p10k.batch / p100.batch,
    "informational (one full scan)",
  );
  if (baseline) {
    const b100 = await probeCost(100, baseline);
    const b10k = await probeCost(10_000, baseline);
    for (const k of ["absent", "recent", "oldest", "batch"]) {
      push(
        `[baseline build] probe ${k}, 10k vs 100`,
        b10k[k],
        "ms",
        b100[k],
        b10k[k] / b100[k],
        "same run, before/after",
      );
    }
  }
}

rmSync(root, { recursive: true, force: true });
process.stdout.write(`${JSON.stringify({ name: "effects", n: N, results }, null, 2)}\n`);
