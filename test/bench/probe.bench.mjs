// Probe cost: "is the effect with this key on the branch?" answered by idem (in process) and by the
// plain tool (`git rev-list -1 --grep` / `git log -1 --grep`, one git process per question, in
// bash) on the same repository of 10,000 commits carrying Idem-Effect trailers; warm, and cold
// (page cache dropped before each question) where this process may drop it.
// Usage: npm run build && node test/bench/probe.bench.mjs [--history 10000]   (BENCH_QUICK=1: smoke)
// Prints one JSON object to stdout (see run.mjs).
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "@idem/schema";
import { createEffects } from "../../packages/effects/dist/index.js";
import { figure, interleave, median, report, row, size } from "./lib/measure.mjs";
import { bash, canDropCaches, dropCaches, GIT_ENV, script } from "./lib/plain.mjs";

const H = size("history", 10_000, 1_000);
const SMALL = 100;
const WARM_REPS = size("warm-reps", 5, 2);
const COLD_REPS = size("cold-reps", 2, 1);
const root = mkdtempSync(join(tmpdir(), "idem-probe-bench-"));
const cold = canDropCaches();

/** A bare repo with `n` commits on main, each carrying `Idem-Effect: hist/<i>`, by git fast-import. */
function historyRepo(n) {
  const dir = join(root, `h${n}`);
  mkdirSync(dir);
  execFileSync("git", ["init", "-q", "--bare", "-b", "main"], { cwd: dir, env: GIT_ENV });
  let stream = "";
  for (let i = 0; i < n; i++) {
    const msg = `history ${i}\n\nIdem-Effect: hist/${i}\n`;
    const data = `${i}\n`;
    stream += `commit refs/heads/main\ncommitter b <b@x> ${1_700_000_000 + i} +0000\ndata ${Buffer.byteLength(msg)}\n${msg}`;
    stream += `M 100644 inline f${i % 100}.txt\ndata ${Buffer.byteLength(data)}\n${data}\n`;
  }
  execFileSync("git", ["fast-import", "--quiet"], { cwd: dir, input: stream, env: GIT_ENV });
  return dir;
}

function effectsFor(repo) {
  const config = defaultConfig(root);
  config.sections.repos = {
    site: {
      path: repo,
      branch: "main",
      branches: [],
      author: { name: "idem", email: "idem@localhost" },
    },
  };
  return createEffects(config);
}

const spec = {
  kind: "git.commit",
  repo: "site",
  message: "m",
  files: [{ path: "x.txt", content: "x\n" }],
};
const timed = async (fn) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

/** The history as idem finds it in use: its first apply indexed every key (refs/idem). */
async function indexed(n) {
  const dir = historyRepo(n);
  const fx = effectsFor(dir);
  const s = { ...spec, files: [{ path: "idx.txt", content: "i\n" }] };
  await fx.apply(s, "hist-index/0");
  await fx.close();
  return dir;
}

try {
  const big = await indexed(H);
  const small = await indexed(SMALL);
  const keys = { absent: "new/0", newest: `hist/${H - 1}`, oldest: "hist/0" };
  const warmFx = effectsFor(big);
  await warmFx.probe(spec, "warm/0");
  const smallFx = effectsFor(small);
  await smallFx.probe(spec, "warm/0");

  const idemWarm = async (fx, key) => {
    const xs = [];
    for (let i = 0; i < WARM_REPS * 4; i++) xs.push(await timed(() => fx.probe(spec, key)));
    return median(xs);
  };
  const idemCold = async (key) => {
    const xs = [];
    for (let i = 0; i < COLD_REPS; i++) {
      dropCaches();
      const fx = effectsFor(big);
      xs.push(await timed(() => fx.probe(spec, key)));
      await fx.close();
    }
    return median(xs);
  };
  const plain = (key, how, mode = "") =>
    median(bash("git-probe.sh", [big, "main", key, mode ? COLD_REPS : WARM_REPS, how, mode])) /
    1000;
  const fastestPlain = (key, mode) =>
    Math.min(plain(key, "rev-list", mode), plain(key, "log", mode));

  const results = [];
  const probeLine = (how, key, mode) =>
    `bash ${script("git-probe.sh")} REPO main ${key} ${mode ? COLD_REPS : WARM_REPS} ${how}${mode ? " cold" : ""}`;
  for (const [name, key] of Object.entries(keys)) {
    const warm = await interleave(`probe ${name}, warm`, {
      plain: async () => fastestPlain(key, ""),
      idem: () => idemWarm(warmFx, key),
    });
    results.push(
      row({
        metric: `probe, ${name} key, ${H} commits, warm (idem: a long-lived process)`,
        unit: "ms",
        idem: warm.idem,
        base: warm.plain,
        baseline: `the faster of \`${probeLine("rev-list", key, "")}\` and \`${probeLine("log", key, "")}\``,
      }),
    );
    if (cold) {
      const c = await interleave(`probe ${name}, cold`, {
        plain: async () => fastestPlain(key, "cold"),
        idem: () => idemCold(key),
      });
      results.push(
        row({
          metric: `probe, ${name} key, ${H} commits, cold (page cache dropped; idem: a fresh façade, its git processes started)`,
          unit: "ms",
          idem: c.idem,
          base: c.plain,
          baseline: `the faster of \`${probeLine("rev-list", key, "cold")}\` and \`${probeLine("log", key, "cold")}\``,
        }),
      );
    }
  }
  for (const [name, key] of [
    ["absent", "new/1"],
    ["newest", null],
  ]) {
    const s = await interleave(`probe ${name}, ${H} vs ${SMALL} commits`, {
      small: () => idemWarm(smallFx, key ?? `hist/${SMALL - 1}`),
      big: () => idemWarm(warmFx, key ?? `hist/${H - 1}`),
    });
    results.push(
      row({
        metric: `probe, ${name} key, idem at ${H} commits against idem at ${SMALL} (history length)`,
        unit: "ms",
        idem: s.big,
        base: s.small,
        baseline: `idem's own probe on a history of ${SMALL} commits`,
        target: { max: 2 },
      }),
    );
  }
  const items = Array.from({ length: 100 }, (_, i) => ({ spec, key: `hist/${i * 7}` }));
  const batch = await interleave("probeBatch of 100 keys", {
    plain: async () => median(bash("git-scan.sh", [big, "main", WARM_REPS])) / 1000,
    idem: async () => {
      const fx = effectsFor(big);
      const ms = await timed(() => fx.probeBatch(items));
      await fx.close();
      return ms;
    },
  });
  results.push(
    row({
      metric: `probeBatch of 100 keys (a replay's question), ${H} commits, a fresh façade each round`,
      unit: "ms",
      idem: batch.idem,
      base: batch.plain,
      baseline: `\`bash ${script("git-scan.sh")} REPO main ${WARM_REPS}\` (one git log reading every key)`,
    }),
  );
  if (!cold) {
    results.push(
      figure({
        metric: "cold probes: not measured (dropping the page cache needs root)",
        unit: "",
        values: [Number.NaN],
      }),
    );
  }
  await warmFx.close();
  await smallFx.close();
  report({
    name: "probes",
    command: `node test/bench/probe.bench.mjs --history ${H}`,
    results,
    notes: [
      `REPO: a bare repository of ${H} commits on main, each carrying \`Idem-Effect: hist/<i>\` (git fast-import), then one idem apply (which indexes the keys under refs/idem, as idem's first apply on any repository does). Keys: absent \`new/0\`, newest \`hist/${H - 1}\`, oldest \`hist/0\`.`,
      `idem: \`effects.probe\` in process, the median of ${WARM_REPS * 4} probes per round (warm) or ${COLD_REPS} (cold, each on a fresh \`createEffects\` after the page cache was dropped). Plain tool: one git process per question, timed inside bash, the median of ${WARM_REPS} (warm) or ${COLD_REPS} (cold) per round, the faster of \`git rev-list\` and \`git log\` taken each round.`,
      `Cold: \`sync; echo 3 > /proc/sys/vm/drop_caches\` before every question on both sides (${cold ? "done: this run had root" : "skipped: no root"}).`,
    ],
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
