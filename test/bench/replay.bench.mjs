// Replay benchmark: the dry-run plan over 10,000 git.commit effects (the last 100 of them lost from
// the branch, as after a restore), in process, next to the plain tool's one scan of the branch that
// reads every Idem-Effect key once (`git log --grep`, timed in bash), in interleaved rounds. Target:
// the plan costs at most 3x that scan (a plan probing each effect on its own would cost 10,000).
// The whole `idem replay --all --dry-run` command is in the whole-process table (whole.bench.mjs).
// Usage: npm run build && node test/bench/replay.bench.mjs [--n 10000] [--lost 100]
// Prints one JSON object to stdout (see run.mjs).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildReplayPlan, openEffects } from "@idem/core";
import { openSqliteJournal } from "@idem/journal";
import { interleave, median, report, row, size } from "./lib/measure.mjs";
import { bash, script } from "./lib/plain.mjs";
import { replayFixture } from "./lib/replay-fixture.mjs";

const N = size("n", Number(process.env.BENCH_REPLAY_N ?? 10_000), 1000);
const LOST = size("lost", 100, 10);
const root = mkdtempSync(join(tmpdir(), "idem-replay-bench-"));

try {
  const { config, repo } = await replayFixture(root, N, LOST);
  let summary;
  const rounds = await interleave("replay plan", {
    plain: async () => median(bash("git-scan.sh", [repo, "main", 1])) / 1000,
    idem: async () => {
      const journal = await openSqliteJournal(config.journal.path, { readonly: true });
      const effects = openEffects(config);
      const t = performance.now();
      const plan = await buildReplayPlan({
        config,
        journal,
        effects,
        selection: { all: true },
        forceUnprobeable: false,
      });
      const ms = performance.now() - t;
      summary = plan.summary;
      await effects.close();
      await journal.close();
      return ms;
    },
  });
  if (summary.apply !== LOST || summary.skip !== N - LOST) {
    throw new Error(`unexpected plan ${JSON.stringify(summary)}`);
  }
  const baseline = `\`bash ${script("git-scan.sh")} REPO main 1\` (one git log over the ${N - LOST} commits left)`;
  report({
    name: "replay",
    command: `node test/bench/replay.bench.mjs --n ${N} --lost ${LOST}`,
    results: [
      row({
        metric: `dry-run plan of ${N} git.commit effects (${LOST} lost), in process`,
        unit: "ms",
        idem: rounds.idem,
        base: rounds.plain,
        baseline,
        target: { max: 3 },
      }),
      row({
        metric: "the same per effect",
        unit: "µs",
        idem: rounds.idem.map((x) => (x * 1000) / N),
        base: rounds.plain.map((x) => (x * 1000) / N),
        baseline,
      }),
    ],
    notes: [
      "plan: buildReplayPlan (outputs read in pages, the branch's scan started by a one-item warm-up probe as soon as its first effect is read (its git log writes to a temporary file, read once at the end), decideEffect per effect from the ledger, then one probeBatch per branch), a fresh effects façade and read-only journal handle per round, timed in Node. Plain tool: the scan printed as the baseline, timed inside bash.",
    ],
  });
} finally {
  rmSync(root, { recursive: true, force: true });
}
