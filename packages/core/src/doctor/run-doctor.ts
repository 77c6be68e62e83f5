import { type Config, checkConfigInvariants, redactUrl } from "@idem/schema";
import { describeApprovalRules } from "../approvals/approval-rules.js";
import { kindLockHolders } from "../status/stuck-holders.js";
import { checkAgentCredentials } from "./credentials-check.js";
import type { AddFinding, Finding } from "./finding.js";
import { checkJournal } from "./journal-check.js";
import { checkKinds } from "./kind-checks.js";
import { checkAgentProgram } from "./local-checks.js";
import { checkNats } from "./nats-check.js";

/** What `idem doctor` found, as plain data (its `--json` shape, with the config file added). */
export interface DoctorReport {
  /**
   * False when any finding is a violation (`idem doctor` exits 3) or `unavailable` (a server out
   * of reach, a lock held: exit 1 when there is no violation).
   */
  ok: boolean;
  /** What was checked, in order, for the human summary. */
  checked: string[];
  findings: Finding[];
  /**
   * The rules of `approvals.rules`, one line each (`prs: kind github.pull_request, base main`):
   * checked against the kinds when the config loaded (docs/approvals.md).
   */
  approvalRules: string[];
}

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  /**
   * Also contact the kinds' targets on the network (a GET of each http target's baseUrl);
   * otherwise they are checked syntactically. A kind whose target is the operator's own service
   * (a database) checks it either way.
   */
  network?: boolean;
  /** How long any one network check may take (default 5,000 ms). */
  timeoutMs?: number;
}

/**
 * Everything `idem doctor` checks: the config invariants (docs/configuration.md, "Invariants"), the
 * journal's integrity, the agents' programs and their credentials' variables, each kind's own check of what its options configure
 * (its `doctor`: every target exists and is usable), and the NATS stream and consumers when NATS
 * is configured. Changes nothing: a missing journal is reported, not created; NATS is only read.
 * Safe to run at any time, beside running processes, as often as wanted. No finding shows a URL's
 * credentials (`redactUrl`, docs/security.md).
 * Never throws for what it finds: a damaged journal is a violation; a journal server out of reach
 * or a lock held by another process is `unavailable`, never taken for damage.
 */
export async function runDoctor(
  config: Config,
  options: DoctorOptions = {},
): Promise<DoctorReport> {
  const findings: Finding[] = [];
  const checked: string[] = [];
  const add: AddFinding = (severity, key, finding, fix) =>
    findings.push({ severity, key, finding, fix });

  checked.push("config invariants");
  for (const v of checkConfigInvariants(config)) add("violation", v.key, v.message, v.fix);

  checked.push("journal");
  await checkJournal(config, add);

  if (Object.keys(config.agents).length === 0) {
    add(
      "warning",
      "agents",
      "no agents configured: idem up and idem executor run no agent here; they serve the submit API for agents elsewhere (HTTP POST /v1/outputs, or NATS) and the interpreter applies what is submitted",
      'to run agents here, configure agents.<name> with its command, as the project of idem init --example does (its README and agent.mjs; "A command agent" in docs/agents.md of idem\'s repository)',
    );
  }
  for (const [name, agent] of Object.entries(config.agents)) {
    checked.push(`agent ${name}`);
    checkAgentProgram(name, agent, config.dir, add);
  }
  checked.push(...checkAgentCredentials(config, process.env, add));
  checked.push(
    ...(await checkKinds(
      config,
      { network: options.network ?? false, timeoutMs: options.timeoutMs ?? 5_000 },
      add,
    )),
  );
  // A lock a kind keeps (a repository's) that a frozen (or gone) process holds: nothing is applied
  // there until it is free.
  for (const h of await kindLockHolders(config)) add("unavailable", h.key, h.finding, h.fix);
  if (config.nats) {
    checked.push("NATS stream and consumers");
    for (const f of await checkNats(config, { timeoutMs: options.timeoutMs ?? 5_000 })) {
      findings.push(f);
    }
  }
  const approvalRules = describeApprovalRules(config);
  if (approvalRules.length > 0) checked.push("approval rules");
  const shown = findings.map((f) => ({
    ...f,
    finding: redactUrl(f.finding),
    fix: redactUrl(f.fix),
  }));
  const ok = !findings.some((f) => f.severity !== "warning");
  return { ok, checked, findings: shown, approvalRules };
}
