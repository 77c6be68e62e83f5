import { accessSync, constants, existsSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { openJournal } from "@idem/journal";
import { type Config, checkConfigInvariants } from "@idem/schema";
import { checkNats } from "./nats-check.js";
import { git } from "./run-command.js";

/** A violation makes `idem doctor` exit 3; a warning is worth knowing but breaks nothing yet. */
export type Severity = "violation" | "warning";

export interface Finding {
  severity: Severity;
  /** The config key or the part at fault (`journal.retentionDays`, `repos.site`, `journal`). */
  key: string;
  finding: string;
  /** What to do about it. */
  fix: string;
}

export interface DoctorReport {
  ok: boolean;
  /** What was checked, in order, for the human summary. */
  checked: string[];
  findings: Finding[];
}

export interface DoctorOptions {
  /** Also contact http targets (a GET of each baseUrl); otherwise they are checked syntactically. */
  network?: boolean;
  /** How long any one network check may take. */
  timeoutMs?: number;
}

/**
 * Everything `idem doctor` checks: the config invariants (DESIGN.md 7), the journal's integrity,
 * that every target exists and is usable, and the NATS stream and consumers when NATS is
 * configured. Changes nothing: a missing journal is reported, not created.
 */
export async function runDoctor(
  config: Config,
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const findings: Finding[] = [];
  const checked: string[] = [];
  const add = (severity: Severity, key: string, finding: string, fix: string) =>
    findings.push({ severity, key, finding, fix });

  checked.push("config invariants");
  for (const v of checkConfigInvariants(config)) add("violation", v.key, v.message, v.fix);

  checked.push("journal");
  await checkJournal(config, add);

  for (const [alias, repo] of Object.entries(config.repos)) {
    checked.push(`repo ${alias}`);
    await checkRepo(alias, repo, add);
  }
  for (const [alias, root] of Object.entries(config.roots)) {
    checked.push(`root ${alias}`);
    checkWritableDir(`roots.${alias}`, root.path, "root", add);
  }
  for (const [name, agent] of Object.entries(config.agents)) {
    checked.push(`agent ${name}`);
    const program = agent.command[0] as string;
    if (!findProgram(program, config.dir)) {
      add(
        "violation",
        `agents.${name}.command`,
        `program "${program}" is not found${isAbsolute(program) || program.includes("/") ? "" : " on PATH"}`,
        `install it or fix agents.${name}.command (a relative path is relative to the config file)`,
      );
    }
  }
  for (const [alias, t] of Object.entries(config.http.targets)) {
    checked.push(`http target ${alias}`);
    await checkHttpTarget(alias, t, options, add);
  }
  if (config.nats || Object.keys(config.publish).length > 0) {
    checked.push(config.nats ? "NATS stream and consumers" : "NATS publish targets");
    for (const f of await checkNats(config, { timeoutMs: options.timeoutMs ?? 5_000 })) {
      findings.push(f);
    }
  }
  return { ok: !findings.some((f) => f.severity === "violation"), checked, findings };
}

type Add = (severity: Severity, key: string, finding: string, fix: string) => void;

async function checkJournal(config: Config, add: Add): Promise<void> {
  const path = config.journal.path;
  if (!existsSync(path)) {
    add(
      "warning",
      "journal.path",
      `no journal at ${path} yet`,
      "run `idem init` here, or point --config at the config of the journal you mean",
    );
    checkWritableDir("journal.path", dirname(nearestExisting(path)), "journal folder", add);
    return;
  }
  let problems: string[];
  try {
    const journal = await openJournal(path, { synchronous: config.journal.synchronous });
    try {
      problems = await journal.integrity();
    } finally {
      await journal.close();
    }
  } catch (e) {
    add(
      "violation",
      "journal",
      `cannot open ${path}: ${(e as Error).message}`,
      "restore it from the latest `idem backup` (docs/runbook.md, Restore a journal from a backup)",
    );
    return;
  }
  for (const p of problems) {
    add("violation", "journal", p, journalFix(p));
  }
  if (config.journal.synchronous === "OFF" || config.journal.synchronous === "NORMAL") {
    add(
      "warning",
      "journal.synchronous",
      `synchronous is ${config.journal.synchronous}: a host crash can lose the last commits, and with them recorded outputs`,
      'set journal.synchronous to "FULL" unless you accept that',
    );
  }
  if (config.journal.retentionDays !== null && existsSync(config.journal.archiveDir)) {
    checkWritableDir("journal.archiveDir", config.journal.archiveDir, "archive folder", add);
  }
}

function journalFix(problem: string): string {
  if (problem.startsWith("integrity_check"))
    return "stop idem, restore the latest `idem backup` (docs/runbook.md), then replay what came after";
  if (problem.startsWith("journal_mode"))
    return "open it once with any idem command (it sets WAL), and make sure nothing else opens it in another mode";
  if (problem.startsWith("trigger"))
    return "something dropped an immutability trigger: restore from a backup; never edit the journal by hand";
  if (problem.includes("unsettled effect"))
    return "replay that job (`idem replay --job JOB --dry-run`, then without --dry-run) and report it as a bug";
  if (problem.includes("has no run"))
    return "replay that job (`idem replay --job JOB`) to give it a run";
  return "see docs/runbook.md";
}

async function checkRepo(alias: string, repo: Config["repos"][string], add: Add): Promise<void> {
  const key = `repos.${alias}`;
  if (!existsSync(repo.path)) {
    add(
      "violation",
      `${key}.path`,
      `${repo.path} does not exist`,
      `create it (git init -b ${repo.branch} ${repo.path}) or fix ${key}.path`,
    );
    return;
  }
  let top: string;
  try {
    const r = await git(repo.path, ["rev-parse", "--show-toplevel"]);
    if (r.code !== 0) {
      add(
        "violation",
        `${key}.path`,
        `${repo.path} is not a git repository`,
        `run git init -b ${repo.branch} in it, or fix ${key}.path`,
      );
      return;
    }
    top = r.stdout.trim();
  } catch (e) {
    add("violation", key, `cannot run git: ${(e as Error).message}`, "install git (2.39 or later)");
    return;
  }
  if (realpathSync(top) !== realpathSync(repo.path)) {
    add(
      "violation",
      `${key}.path`,
      `${repo.path} is inside the repository ${top}, not the top of one`,
      `point ${key}.path at ${top}, or git init ${repo.path} on its own`,
    );
  }
  for (const [i, branch] of [repo.branch, ...repo.branches].entries()) {
    const r = await git(repo.path, [
      "rev-parse",
      "--verify",
      "--quiet",
      `refs/heads/${branch}^{commit}`,
    ]);
    if (r.code !== 0) {
      add(
        i === 0 ? "violation" : "warning",
        i === 0 ? `${key}.branch` : `${key}.branches`,
        `branch ${branch} does not exist in ${repo.path}`,
        i === 0
          ? `create it with a first commit (git -C ${repo.path} commit --allow-empty -m init on ${branch}), or fix ${key}.branch`
          : `create it (git -C ${repo.path} branch ${branch} ${repo.branch}) before an agent targets it`,
      );
    }
  }
  for (const lock of ["index.lock", "HEAD.lock"]) {
    const gitDir = await git(repo.path, ["rev-parse", "--absolute-git-dir"]);
    const file = join(gitDir.stdout.trim(), lock);
    if (gitDir.code === 0 && existsSync(file)) {
      add(
        "warning",
        key,
        `${file} exists: a git process was killed or is running`,
        "idem removes a stale lock of its own under its repo lock; if no git runs there, delete the file",
      );
    }
  }
}

function checkWritableDir(key: string, path: string, what: string, add: Add): void {
  if (!existsSync(path)) {
    add("violation", key, `${what} ${path} does not exist`, `mkdir -p ${path}, or fix ${key}`);
    return;
  }
  if (!statSync(path).isDirectory()) {
    add("violation", key, `${what} ${path} is not a directory`, `fix ${key}`);
    return;
  }
  try {
    accessSync(path, constants.W_OK);
  } catch {
    add(
      "violation",
      key,
      `${what} ${path} is not writable by this user`,
      `chown or chmod it for the user idem runs as`,
    );
  }
}

function nearestExisting(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return join(p, "x");
}

function findProgram(program: string, dir: string): boolean {
  if (isAbsolute(program)) return existsSync(program);
  if (program.includes("/")) return existsSync(resolve(dir, program));
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (d !== "" && existsSync(join(d, program))) return true;
  }
  return false;
}

async function checkHttpTarget(
  alias: string,
  t: Config["http"]["targets"][string],
  options: DoctorOptions,
  add: Add,
): Promise<void> {
  const key = `http.targets.${alias}`;
  if (!t.idempotencyKeys && t.probeUrl === null) {
    add(
      "warning",
      key,
      "neither idempotencyKeys nor probeUrl: an effect interrupted mid-request becomes uncertain and waits for a human",
      `set ${key}.idempotencyKeys if the service honours Idempotency-Key, or give it a probeUrl`,
    );
  }
  if (!options.network) return;
  try {
    const res = await fetch(t.baseUrl, {
      method: "GET",
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
    await res.body?.cancel();
  } catch (e) {
    add(
      "violation",
      `${key}.baseUrl`,
      `${t.baseUrl} is not reachable: ${(e as Error).message}`,
      "start the service or fix the URL; its effects fail and retry until it answers",
    );
  }
}
