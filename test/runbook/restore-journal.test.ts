import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { effectKey } from "@idem/schema";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest, trailerCounts, waitFor } from "../chaos/interpreter-fixture.js";
import { COMMIT_AGENT, type Incident, incident, jobsFile } from "./incident.js";
import { HEAVY, shell, typed } from "./runbook.js";

// docs/runbook.md, "Restore a journal from a backup": a backup is taken, more jobs are enqueued on
// the embedded queue (some of them run and are applied), the journal is damaged (an immutability
// trigger dropped: doctor's "restore from a backup"), and the documented steps are typed. Every job
// enqueued after the backup runs its agent once, every effect is at its target once, and `idem
// jobs` and `idem audit` say what is missing while something is.

const SECTION = "Restore a journal from a backup";
const AFTER = HEAVY ? 60 : 12;
let fx: Incident | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("restoring a journal from a backup, the runbook's way", () => {
  it(`brings back every job enqueued after the backup: all ${AFTER} run once`, async () => {
    fx = await incident(
      { leaseMs: 2000 },
      {
        agents: { writer: { command: ["node", "agent.mjs"], timeoutMs: 60_000 } },
        queue: { pollMs: 20, backoffMs: [100], maxDeliver: 3 },
      },
    );
    const cwd = fx.dir;
    writeFileSync(join(cwd, "agent.mjs"), COMMIT_AGENT);
    const backups = join(cwd, "backups");
    const run = async (command: string, vars: Record<string, string> = {}) => {
      const r = await shell(command, { cwd, vars });
      return r;
    };
    const waitDone = async (ids: string[]) => {
      const j = await fx?.journal();
      await waitFor(
        `${ids.length} jobs applied`,
        async () => {
          for (const id of ids) if ((await j?.runs.latest(id))?.state !== "done") return false;
          return true;
        },
        { timeoutMs: 180_000, intervalMs: 200 },
      );
    };

    const before = ["b-1", "b-2", "b-3"];
    expect((await run(`idem enqueue ${jobsFile(cwd, "before.jsonl", before)}`)).code).toBe(0);
    const up = fx.start(["up"]);
    await waitDone(before);
    up.child.kill("SIGTERM");
    expect(await up.exited).toBe(0);

    const backup = await run(`mkdir -p ${backups} && ${typed(SECTION, /^idem backup /)}`, {
      "/backups": backups,
    });
    expect(backup.code, backup.stderr).toBe(0);
    const [file] = readdirSync(backups);
    expect(file).toMatch(/^idem-\d{8}T\d{6}Z\.db$/);

    // After the backup: a third of the jobs enqueued, run and applied; the rest enqueued and waiting.
    const after = Array.from({ length: AFTER }, (_, i) => `a-${i + 1}`);
    const ran = after.slice(0, AFTER / 3);
    const waitingJobs = after.slice(AFTER / 3);
    expect((await run(`idem enqueue ${jobsFile(cwd, "ran.jsonl", ran)}`)).code).toBe(0);
    const again = fx.start(["up"]);
    await waitDone(ran);
    again.child.kill("SIGTERM");
    expect(await again.exited).toBe(0);
    expect((await run(`idem enqueue ${jobsFile(cwd, "waiting.jsonl", waitingJobs)}`)).code).toBe(0);
    await fx.closeJournal();

    // The damage: an immutability trigger dropped. Doctor says restore from a backup.
    const sqlite = createRequire(import.meta.url)("better-sqlite3");
    const db = new sqlite(fx.ws.config.journal.path);
    db.exec("DROP TRIGGER outputs_no_update");
    db.close();
    const damaged = await run(typed("First look", /^idem doctor\b/));
    expect(damaged.code).toBe(3);
    expect(damaged.stdout).toContain("outputs_no_update");

    // The runbook's steps, as written.
    const restore = await run(typed(SECTION, /^idem journal restore /), {
      "/backups/idem-20260501T020000Z.db": join(backups, file as string),
    });
    expect(restore.code, restore.stdout + restore.stderr).toBe(0);
    expect(restore.stdout).toContain("came back");
    const doctor = await run(typed(SECTION, /^idem doctor\b/));
    expect(doctor.code, doctor.stdout).toBe(0);
    const jobs = await run(`${typed(SECTION, /^idem jobs\b/)} --json`);
    const waiting = (JSON.parse(jobs.stdout) as { jobs: { jobId: string }[] }).jobs.map(
      (x) => x.jobId,
    );
    expect(waiting.sort()).toEqual([...waitingJobs].sort());
    expect(JSON.parse(jobs.stdout).restore).toBeNull();

    fx.start([typed(SECTION, /^idem up\b/).split(" ")[1] as string]);
    await waitDone([...before, ...after]);
    const audit = await run(typed(SECTION, /^idem audit\b/));
    expect(audit.code, audit.stdout).toBe(0);

    const runs = readFileSync(join(cwd, "runs.log"), "utf8").trim().split("\n");
    expect(runs.sort()).toEqual([...before, ...after].sort());
    const counts = await trailerCounts(fx.ws.repoPath);
    for (const id of [...before, ...after]) expect(counts.get(effectKey(id, 0))).toBe(1);
  });

  it("says what is missing in idem jobs and idem audit until recover brings it back from another copy", async () => {
    fx = await incident({}, { agents: { writer: { command: ["node", "agent.mjs"] } } });
    const cwd = fx.dir;
    expect((await shell("idem init --journal", { cwd })).code).toBe(0);
    const backups = join(cwd, "backups");
    const backup = await shell(`mkdir -p ${backups} && ${typed(SECTION, /^idem backup /)}`, {
      cwd,
      vars: { "/backups": backups },
    });
    expect(backup.code, backup.stderr).toBe(0);
    const [file] = readdirSync(backups);
    const lost = ["lost-1", "lost-2"];
    expect((await shell(`idem enqueue ${jobsFile(cwd, "lost.jsonl", lost)}`, { cwd })).code).toBe(
      0,
    );
    // A copy of the journal elsewhere, then the journal itself destroyed (truncated).
    const copy = join(cwd, "copy.db");
    expect((await shell(`idem backup ${copy}`, { cwd })).code).toBe(0);
    await fx.closeJournal();
    writeFileSync(fx.ws.config.journal.path, "");

    const restore = await shell(typed(SECTION, /^idem journal restore /), {
      cwd,
      vars: { "/backups/idem-20260501T020000Z.db": join(backups, file as string) },
    });
    expect(restore.code, restore.stdout).toBe(1);
    expect(restore.stdout).toContain("could not read");
    for (const command of ["idem jobs", typed(SECTION, /^idem audit\b/)]) {
      const r = await shell(command, { cwd });
      expect(r.stdout, command).toContain("restored");
      expect(r.stdout).toContain("idem journal recover --accept-loss");
    }
    expect((await shell(typed(SECTION, /^idem audit\b/), { cwd })).code).toBe(3);

    const recover = await shell(typed(SECTION, /^idem journal recover --from /), {
      cwd,
      vars: { "/mnt/old-disk/journal.db": copy },
    });
    expect(recover.code, recover.stdout + recover.stderr).toBe(0);
    const jobs = JSON.parse((await shell("idem jobs --json", { cwd })).stdout);
    expect(jobs.jobs.map((x: { jobId: string }) => x.jobId).sort()).toEqual(lost);
    // --from another copy brought the jobs back, but the restore's own kept journal stays unread:
    // its notice ends only when the loss is accepted.
    expect(jobs.restore).not.toBeNull();
    const accept = await shell(typed(SECTION, /--accept-loss/), { cwd });
    expect(accept.code, accept.stderr).toBe(0);
    expect(JSON.parse((await shell("idem jobs --json", { cwd })).stdout).restore).toBeNull();
    expect((await shell(typed(SECTION, /^idem audit\b/), { cwd })).code).toBe(0);
  });
});
