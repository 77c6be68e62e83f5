// The replay fixture the replay and whole-process benches share: a workspace (idem.config.json, a
// journal, repos/site) whose N outputs of one git.commit each were interpreted (ledger: applied),
// with the last LOST of those commits gone from the branch, as after a restore from backup.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { effectTargetsOf } from "@idem/effects";
import { openSqliteJournal } from "@idem/journal";
import { parseConfig } from "@idem/schema";
import { GIT_ENV } from "./plain.mjs";

export const jobId = (i) => `job-${String(i).padStart(6, "0")}`;
const log = (m) => process.stderr.write(`replay fixture: ${m}\n`);

/** Builds the workspace in `root` (which must exist, empty); answers { config, configFile, repo }. */
export async function replayFixture(root, n, lost) {
  const repo = join(root, "repos/site");
  const git = (...args) =>
    execFileSync("git", ["-C", repo, ...args], {
      env: GIT_ENV,
      encoding: "utf8",
      maxBuffer: 1 << 30,
    });
  mkdirSync(repo, { recursive: true });
  git("init", "-q", "-b", "main");
  let t0 = performance.now();
  const parts = [];
  for (let i = 0; i < n; i++) {
    const msg = `write notes/${i}.txt\n\nIdem-Effect: ${jobId(i)}/0\n`;
    const content = `${i}\n`;
    parts.push(
      `commit refs/heads/main\nmark :${i + 1}\ncommitter bench <bench@idem.invalid> ${1_700_000_000 + i} +0000\n` +
        `data ${Buffer.byteLength(msg)}\n${msg}` +
        (i > 0 ? `from :${i}\n` : "") +
        `M 100644 inline notes/${i}.txt\ndata ${Buffer.byteLength(content)}\n${content}\n`,
    );
  }
  execFileSync("git", ["-C", repo, "fast-import", "--quiet"], {
    input: parts.join(""),
    env: GIT_ENV,
  });
  git("reset", "-q", "--hard", "main");
  log(`repo with ${n} commits in ${Math.round(performance.now() - t0)} ms`);

  const raw = {
    repos: { site: { path: "repos/site" } },
    journal: { path: ".idem/journal.db", synchronous: "OFF" },
  };
  const configFile = join(root, "idem.config.json");
  writeFileSync(configFile, JSON.stringify(raw));
  const parsed = parseConfig(raw, { dir: root, file: configFile });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  t0 = performance.now();
  const journal = await openSqliteJournal(config.journal.path, { synchronous: "OFF" });
  for (let i = 0; i < n; i++) {
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
      targets: effectTargetsOf(output, config),
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
  log(`journal with ${n} interpreted outputs in ${Math.round(performance.now() - t0)} ms`);
  // The incident: the last `lost` effect commits are gone.
  git("reset", "-q", "--hard", `main~${lost}`);
  return { config, configFile, repo };
}
