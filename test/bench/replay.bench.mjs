// Replay benchmark: `idem replay --all --dry-run` over 10,000 git.commit effects (the last LOST of
// them lost from the branch, as after a restore), next to one `git log` of the same branch in the
// same run: the raw cost of reading every Idem-Effect key once. Target: the dry-run plan costs at
// most 3x that one scan (a plan that probed each effect on its own would cost 10,000 scans).
// Usage: npx tsc -b apps/cli && node test/bench/replay.bench.mjs [--n 10000] [--lost 100]
// Prints one JSON object to stdout (see run.mjs).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildReplayPlan, openTargets } from "@idem/core";
import { openJournal } from "@idem/journal";
import { effectTargets, parseConfig } from "@idem/schema";

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const N = arg("--n", Number(process.env.BENCH_REPLAY_N ?? 10_000));
const LOST = arg("--lost", 100);
const ROUNDS = 5;
const ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@idem.invalid",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@idem.invalid",
};
const root = mkdtempSync(join(tmpdir(), "idem-replay-bench-"));
const repo = join(root, "repos/site");
const log = (m) => process.stderr.write(`replay bench: ${m}\n`);
const git = (...args) =>
  execFileSync("git", ["-C", repo, ...args], { env: ENV, encoding: "utf8", maxBuffer: 1 << 30 });
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;
const jobId = (i) => `job-${String(i).padStart(6, "0")}`;

try {
  // --- a repo whose history holds N idem commits, built with one git fast-import -------------
  mkdirSync(repo, { recursive: true });
  git("init", "-q", "-b", "main");
  const t0 = process.hrtime.bigint();
  let stream = "";
  for (let i = 0; i < N; i++) {
    const msg = `write notes/${i}.txt\n\nIdem-Effect: ${jobId(i)}/0\n`;
    const content = `${i}\n`;
    stream +=
      `commit refs/heads/main\nmark :${i + 1}\ncommitter bench <bench@idem.invalid> ${1_700_000_000 + i} +0000\n` +
      `data ${Buffer.byteLength(msg)}\n${msg}` +
      (i > 0 ? `from :${i}\n` : "") +
      `M 100644 inline notes/${i}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  execFileSync("git", ["-C", repo, "fast-import", "--quiet"], { input: stream, env: ENV });
  git("reset", "-q", "--hard", "main");
  log(`repo with ${N} commits in ${round(ms(t0) / 1000)} s`);

  // --- a journal whose N outputs were interpreted (ledger: applied) --------------------------
  const raw = {
    repos: { site: { path: "repos/site" } },
    journal: { path: ".idem/journal.db", synchronous: "OFF" },
  };
  writeFileSync(join(root, "idem.config.json"), JSON.stringify(raw));
  const parsed = parseConfig(raw, { dir: root, file: join(root, "idem.config.json") });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const t1 = process.hrtime.bigint();
  const journal = await openJournal(config.journal.path, { synchronous: "OFF" });
  for (let i = 0; i < N; i++) {
    const output = {
      jobId: jobId(i),
      agent: "writer",
      effects: [
        {
          kind: "git.commit",
          repo: "site",
          message: `write notes/${i}.txt`,
          files: [{ path: `notes/${i}.txt`, content: `${i}\n` }],
        },
      ],
    };
    await journal.outputs.record(output, {
      source: "bench",
      targets: effectTargets(output, config),
    });
    const claim = await journal.runs.claim({
      owner: "bench",
      leaseMs: 60_000,
      maxLeaseExpiries: 5,
    });
    const key = `${output.jobId}/0`;
    await journal.ledger.intend(claim.lease, {
      key,
      idx: 0,
      kind: "git.commit",
      specHash: "bench",
    });
    await journal.ledger.settle(claim.lease, key, "applied", { commit: "bench" });
    await journal.runs.complete(claim.lease);
  }
  await journal.close();
  log(`journal with ${N} interpreted outputs in ${round(ms(t1) / 1000)} s`);

  // The incident: the last LOST effect commits are gone.
  git("reset", "-q", "--hard", `main~${LOST}`);

  // --- raw and idem, interleaved round by round so machine drift hits both alike -------------
  // raw: one git log of the branch, every key's trailer read once.
  // idem: the dry-run plan in-process (a fresh effects façade each round: no warm cache).
  const rawRuns = [];
  const planRuns = [];
  const ratios = [];
  let summary;
  for (let r = 0; r < ROUNDS; r++) {
    let t = process.hrtime.bigint();
    execFileSync(
      "git",
      ["-C", repo, "log", "--format=%H%x00%B%x00", "--grep=^Idem-Effect:", "main", "--"],
      { maxBuffer: 1 << 30 },
    );
    rawRuns.push(ms(t));
    const j = await openJournal(config.journal.path, { readonly: true });
    const effects = openTargets(config);
    t = process.hrtime.bigint();
    const plan = await buildReplayPlan({
      config,
      journal: j,
      effects,
      selection: { all: true },
      forceUnprobeable: false,
    });
    planRuns.push(ms(t));
    ratios.push(planRuns[r] / rawRuns[r]);
    summary = plan.summary;
    await effects.close();
    await j.close();
  }
  if (summary.apply !== LOST || summary.skip !== N - LOST) {
    throw new Error(`unexpected plan ${JSON.stringify(summary)}`);
  }

  // --- idem: the whole command as a person runs it (process start included) ------------------
  const cliRuns = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = process.hrtime.bigint();
    const res = spawnSync(
      process.execPath,
      [
        "apps/cli/bin/idem.js",
        "replay",
        "--all",
        "--dry-run",
        "--json",
        "--config",
        join(root, "idem.config.json"),
      ],
      { encoding: "utf8", maxBuffer: 1 << 30 },
    );
    cliRuns.push(ms(t));
    if (res.status !== 0) throw new Error(`idem replay exited ${res.status}: ${res.stderr}`);
  }

  const rawMs = median(rawRuns);
  const planMs = median(planRuns);
  const cliMs = median(cliRuns);
  const results = [
    {
      metric: `dry-run plan of ${N} git.commit effects (${LOST} lost), in-process`,
      value: round(planMs),
      unit: "ms",
      raw: round(rawMs),
      ratio: round(median(ratios), 2),
      target: "<= 3x one git log of the branch",
    },
    {
      metric: `idem replay --all --dry-run --json, whole process (${N} effects)`,
      value: round(cliMs),
      unit: "ms",
      raw: round(rawMs),
      ratio: round(cliMs / rawMs, 2),
      target: "(informational: includes Node start and JSON output)",
    },
    {
      metric: "plan cost per effect",
      value: round((planMs * 1000) / N),
      unit: "µs",
      raw: round((rawMs * 1000) / N),
      ratio: round(median(ratios), 2),
      target: "",
    },
  ];
  process.stdout.write(
    `${JSON.stringify(
      {
        name: "replay",
        command: "node test/bench/replay.bench.mjs",
        n: N,
        lost: LOST,
        rounds: {
          raw: rawRuns.map((x) => round(x)),
          plan: planRuns.map((x) => round(x)),
          ratio: ratios.map((x) => round(x, 2)),
          cli: cliRuns.map((x) => round(x)),
        },
        results,
        notes: [
          `raw: \`git log --format=%H%x00%B%x00 --grep=^Idem-Effect: main\` over ${N - LOST} commits, the one scan that reads every key; medians of ${ROUNDS}; the plan ratio is the median of per-round ratios (raw and plan measured back to back).`,
          "plan: buildReplayPlan (outputs read in pages, the branch's scan started by a one-item warm-up probe as soon as its first effect is read, decideEffect per effect from the ledger, then one probeBatch per branch), a fresh effects façade and journal handle per round.",
        ],
      },
      null,
      2,
    )}\n`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
