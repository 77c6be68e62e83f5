// git effects throughput: idem's git.commit and git.patch (probe + apply, in process, a checked-out
// repo) next to the plain-tool loops in bash on the same kind of repo, in interleaved rounds; with
// git's own fsync on the plain side for idem's `durable: true`.
// Usage: npm run build && node test/bench/effects.bench.mjs [--n 150]   (BENCH_QUICK=1: a smoke run)
// Prints one JSON object to stdout (see run.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "@idem/schema";
import { builtInKinds, createEffects, kindRegistryOf } from "../../packages/effects/dist/index.js";
import { interleave, perSec, report, row, size } from "./lib/measure.mjs";
import { bash, GIT_ENV, GIT_FSYNC, script } from "./lib/plain.mjs";

const N = size("n", 150, 20);
const root = mkdtempSync(join(tmpdir(), "idem-effects-bench-"));
const git = (cwd, ...args) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();

let seq = 0;
/** A checked-out repository on `main` with one seed commit, as both sides start from. */
function newRepo() {
  const dir = join(root, `r${seq++}`);
  mkdirSync(dir);
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "bench\n");
  git(dir, "add", "README.md");
  git(dir, "commit", "-qm", "seed");
  return dir;
}
const newFilePatch = (i) =>
  `diff --git a/p/f${i}.txt b/p/f${i}.txt\nnew file mode 100644\n--- /dev/null\n+++ b/p/f${i}.txt\n@@ -0,0 +1 @@\n+line ${i}\n`;
const patchDir = join(root, "patches");
mkdirSync(patchDir);
for (let i = 0; i < N; i++) writeFileSync(join(patchDir, `${i}.patch`), newFilePatch(i));

/** The effects of a config whose repo `site` is `repo`, its git kinds built with `git` (`{ durable }`). */
function effectsFor(repo, git = {}) {
  const config = defaultConfig(root);
  config.sections.repos = {
    site: {
      path: repo,
      branch: "main",
      branches: [],
      author: { name: "idem", email: "idem@localhost" },
    },
  };
  return createEffects(config, { kinds: kindRegistryOf(config, builtInKinds({ git })) });
}

/** idem: N git.commit effects (probe, then apply) on a fresh repo; answers effects/s. */
async function idemCommits(options = {}) {
  const repo = newRepo();
  const fx = effectsFor(repo, options);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const spec = {
      kind: "git.commit",
      repo: "site",
      message: `idem ${i}`,
      files: [{ path: `f${i}.txt`, content: `${i}\n` }],
    };
    const p = await fx.probe(spec, `bench-c/${i}`);
    await fx.apply(spec, `bench-c/${i}`, { probed: p });
  }
  const rate = perSec(N, performance.now() - t0);
  await fx.close();
  if (git(repo, "status", "--porcelain") !== "") throw new Error("idem left the tree dirty");
  return rate;
}

/** idem: N git.patch effects, each a new-file patch, on a fresh repo; answers effects/s. */
async function idemPatches(options = {}) {
  const repo = newRepo();
  const fx = effectsFor(repo, options);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const spec = {
      kind: "git.patch",
      repo: "site",
      message: `idem patch ${i}`,
      patch: newFilePatch(i),
    };
    const p = await fx.probe(spec, `bench-p/${i}`);
    await fx.apply(spec, `bench-p/${i}`, { probed: p });
  }
  const rate = perSec(N, performance.now() - t0);
  await fx.close();
  return rate;
}

/** The plain loops in bash on a fresh repo; answer commits/s as the script timed them. */
const plainCommits = (gitArgs = []) => {
  const [us] = bash("git-commit-loop.sh", [newRepo(), 0, N, ...gitArgs]);
  return perSec(N, us / 1000);
};
const plainPatches = (gitArgs = []) => {
  const [us] = bash("git-patch-loop.sh", [newRepo(), patchDir, 0, N, ...gitArgs]);
  return perSec(N, us / 1000);
};

try {
  const commits = await interleave("git.commit", {
    plain: async () => plainCommits(),
    idem: () => idemCommits({ durable: false }),
    plainFsync: async () => plainCommits(GIT_FSYNC),
    idemDurable: () => idemCommits({ durable: true }),
  });
  const patches = await interleave("git.patch", {
    plain: async () => plainPatches(),
    idem: () => idemPatches({ durable: false }),
    plainFsync: async () => plainPatches(GIT_FSYNC),
    idemDurable: () => idemPatches({ durable: true }),
  });
  const fsync = GIT_FSYNC.join(" ");
  const commitLoop = (extra) => `bash ${script("git-commit-loop.sh")} REPO 0 ${N}${extra}`;
  const patchLoop = (extra) => `bash ${script("git-patch-loop.sh")} REPO PATCHES 0 ${N}${extra}`;
  const unit = "commits/s";
  const results = [
    row({
      metric:
        "git.commit, the default (durable: loose objects and refs fsynced before apply returns)",
      unit,
      idem: commits.idemDurable,
      base: commits.plainFsync,
      baseline: commitLoop(` ${fsync}`),
      target: { min: 1.0, goal: 2 },
    }),
    row({
      metric: "git.commit, durable: false (nothing fsynced, as git by default)",
      unit,
      idem: commits.idem,
      base: commits.plain,
      baseline: commitLoop(""),
      target: { min: 1.0, goal: 2 },
    }),
    row({
      metric: "git.commit, the default (durable), against the plain loop without fsync",
      unit,
      idem: commits.idemDurable,
      base: commits.plain,
      baseline: commitLoop(""),
      note: "what durability costs against git's default",
    }),
    row({
      metric: "git alone: the plain loop with git's fsync, against the plain loop without",
      unit,
      idem: commits.plainFsync,
      base: commits.plain,
      baseline: commitLoop(""),
      note: "the idem column is the plain loop with fsync, [1]",
    }),
    row({
      metric: "git.patch, the default (durable)",
      unit,
      idem: patches.idemDurable,
      base: patches.plainFsync,
      baseline: patchLoop(` ${fsync}`),
      target: { min: 1.0, goal: 2 },
    }),
    row({
      metric: "git.patch, durable: false",
      unit,
      idem: patches.idem,
      base: patches.plain,
      baseline: patchLoop(""),
      target: { min: 1.0, goal: 2 },
    }),
  ];
  report({
    name: "effects",
    command: `node test/bench/effects.bench.mjs --n ${N}`,
    results,
    notes: [
      `Each round: ${N} effects per side, each side on a fresh checked-out repo (one seed commit, branch main). idem: probe + apply per effect in one Node process (\`createEffects\` from packages/effects/dist), the loop timed in Node. Plain tool: the bash loop printed as the baseline, timed inside bash with $EPOCHREALTIME (no process start counted on either side).`,
      "git.commit writes f<i>.txt holding `<i>\\n` in a new commit; git.patch applies a patch that creates p/f<i>.txt (PATCHES holds one file per patch, written before the rounds).",
      "The plain loops run git with `-c maintenance.auto=false`, as idem does: otherwise every `git commit` starts a `git maintenance run --auto` process that has nothing to do at this size.",
      `Durable (the default, see docs/reliability.md, "Power loss"): idem fsyncs the loose objects of an effect and the lock files of the refs it moves together before any ref is renamed into place (git's ref transaction, in process); the plain side is the same loop under git's own \`${fsync}\` (\`core.fsyncMethod=batch\` is not used: git documents it as safe on macOS and Windows only).`,
    ],
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
