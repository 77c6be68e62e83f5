import { spawn } from "node:child_process";
import type { Logger } from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import { aliasOf, IdemError, parseStrictJson } from "@idem/schema";
import { describeAgentStdout, escapedText } from "./output-excerpt.js";

/** What an agent runner gets besides the job. */
export interface RunContext {
  /**
   * Aborted at the agent's `timeoutMs`, when the executor has stopped waiting (it fails the run with
   * TIMEOUT itself): the runner should stop. Made on first read.
   */
  signal: AbortSignal;
  log: Logger;
}

/**
 * Runs one agent on one job and returns its raw output (validated by the executor). Called at most
 * once per delivery, and never for a job whose output is recorded. A rejection is a failed delivery,
 * retried after the backoff.
 */
export type AgentRunner = (job: Job, context: RunContext) => Promise<unknown>;

/**
 * The agent command protocol of docs/agents.md ("A command agent"): spawns `agents.<name>.command` without a shell, writes
 * the Job as JSON to stdin, sets `IDEM_JOB_ID`, reads one AgentOutput JSON from stdout; stderr goes
 * to the log. The child runs in its own process group, which is SIGKILLed when the signal aborts and when
 * the child exits (nothing it started outlives it).
 * @throws AGENT_FAILED on a non-zero exit, TIMEOUT when aborted, INVALID_INPUT when stdout is not
 * one JSON value in UTF-8 or is JSON that parsing would change (a key twice, a big integer), OUTPUT_TOO_LARGE beyond `limits.maxOutputBytes`, NOT_FOUND for an unconfigured agent.
 */
export function createCommandRunner(config: Config): AgentRunner {
  return (job, { signal, log }) =>
    new Promise<unknown>((resolve, reject) => {
      const agent = aliasOf(config.agents, job.agent);
      if (!agent) {
        reject(new IdemError("NOT_FOUND", `agent "${job.agent}" is not configured`));
        return;
      }
      const [program, ...args] = agent.command as [string, ...string[]];
      // Its own process group (docs/agents.md, Stopping): a Ctrl-C meant for idem does not reach
      // it, and a kill reaches whatever it started.
      const child = spawn(program, args, {
        cwd: config.dir,
        env: { ...process.env, IDEM_JOB_ID: job.jobId },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        detached: true,
      });
      const group = trackGroup(child.pid);
      const max = config.limits.maxOutputBytes;
      const chunks: Buffer[] = [];
      let size = 0;
      let failure: IdemError | undefined;
      let stderrTail = "";
      const kill = () => {
        if (child.exitCode === null && child.signalCode === null) group.kill();
      };
      const onAbort = () => {
        failure ??= new IdemError(
          "TIMEOUT",
          `agent ${job.agent} did not finish within ${agent.timeoutMs} ms`,
        );
        kill();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      child.stdout.on("data", (d: Buffer) => {
        size += d.length;
        if (size > max) {
          failure ??= new IdemError(
            "OUTPUT_TOO_LARGE",
            `agent ${job.agent} printed more than limits.maxOutputBytes (${max})`,
          );
          kill();
          return;
        }
        chunks.push(d);
      });
      let partial = "";
      child.stderr.on("data", (d: Buffer) => {
        const text = partial + d.toString("utf8");
        const lines = text.split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines) {
          if (line.length > 0) log.info({ jobId: job.jobId, agent: job.agent, stderr: line });
        }
        stderrTail = (stderrTail + d.toString("utf8")).slice(-500);
      });
      child.stdin.on("error", () => {
        // the agent may exit without reading its input; the exit code decides
      });
      child.stdin.end(JSON.stringify(job));
      child.once("error", (e) => {
        signal.removeEventListener("abort", onAbort);
        group.forget();
        reject(
          new IdemError("AGENT_FAILED", `agent ${job.agent} could not start: ${e.message}`, {
            cause: e,
          }),
        );
      });
      child.once("close", (code, sig) => {
        signal.removeEventListener("abort", onAbort);
        // What the agent left running in its group dies with it.
        group.kill();
        group.forget();
        if (partial.length > 0) log.info({ jobId: job.jobId, agent: job.agent, stderr: partial });
        if (failure) return reject(failure);
        if (code !== 0) {
          return reject(
            new IdemError(
              "AGENT_FAILED",
              `agent ${job.agent} exited with ${code === null ? `signal ${sig}` : `code ${code}`}${stderrTail ? `: ${stderrTail.trim().split("\n").at(-1)}` : ""}`,
              { details: { exitCode: code, signal: sig } },
            ),
          );
        }
        const bytes = Buffer.concat(chunks);
        const parsed = parseStrictJson(bytes);
        if (parsed.ok) return resolve(parsed.value);
        const why = parsed.issues.map((i) => `${i.path || "(root)"} ${i.message}`).join("; ");
        reject(
          new IdemError(
            "INVALID_INPUT",
            `agent ${job.agent} did not print one JSON value on stdout: ${escapedText(why)} (${describeAgentStdout(bytes.toString("utf8").trim())}); logs belong on stderr`,
            { details: { issues: parsed.issues } },
          ),
        );
      });
    });
}

/** The process groups of the agents running now: killed when this process exits. */
const liveGroups = new Set<number>();
let exitHook = false;

/** SIGKILLs a process group, ignoring one that is gone. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {
    // gone already (ESRCH)
  }
}

/**
 * Tracks an agent's process group (its pid leads it): `kill()` SIGKILLs the whole group, and every
 * group still tracked is killed when this process exits, so an executor that ends (but for a
 * SIGKILL of its own) leaves no agent behind.
 */
function trackGroup(pid: number | undefined): { kill(): void; forget(): void } {
  if (pid === undefined) return { kill: () => {}, forget: () => {} };
  liveGroups.add(pid);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const g of liveGroups) killGroup(g);
    });
  }
  return { kill: () => killGroup(pid), forget: () => liveGroups.delete(pid) };
}

/**
 * An in-process function as a runner: it is one already, since the executor enforces `timeoutMs`
 * for every runner (at the timeout it stops waiting, a function cannot be killed, and aborts
 * `context.signal`). Kept for callers of the earlier wrapper.
 */
export function functionRunner(
  run: (job: Job, context: RunContext) => Promise<unknown>,
): AgentRunner {
  return run;
}

/**
 * Runs `runner` on `job`, failing with TIMEOUT after `timeoutMs` whether or not the runner stops.
 * The abort signal is created only when the runner reads `context.signal` (the command runner
 * does, to kill its child; most in-process functions do not), so a run that does not look at it
 * costs one timer and no AbortController or listeners.
 */
export function runWithTimeout(
  runner: AgentRunner,
  job: Job,
  timeoutMs: number,
  log: Logger,
  /** Aborting it ends the run at once, as the timeout does (the executor's journal failed). */
  cancel?: AbortSignal,
): Promise<unknown> {
  let controller: AbortController | undefined;
  const context: RunContext = {
    log,
    get signal() {
      controller ??= new AbortController();
      return controller.signal;
    },
  };
  return new Promise<unknown>((resolve, reject) => {
    const end = (error: IdemError) => {
      // Abort first: the command runner's child is SIGKILLed before the failed delivery is handed
      // back, so a redelivery never runs beside it.
      clearTimeout(timer);
      cancel?.removeEventListener("abort", onCancel);
      controller?.abort();
      reject(error);
    };
    const timer = setTimeout(
      () =>
        end(new IdemError("TIMEOUT", `agent ${job.agent} did not finish within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onCancel = () =>
      end(
        new IdemError("UNAVAILABLE", `agent ${job.agent} stopped: ${String(cancel?.reason ?? "")}`),
      );
    if (cancel?.aborted) return onCancel();
    cancel?.addEventListener("abort", onCancel, { once: true });
    let running: Promise<unknown>;
    try {
      running = runner(job, context);
    } catch (e) {
      running = Promise.reject(e);
    }
    running.then(
      (v) => {
        clearTimeout(timer);
        cancel?.removeEventListener("abort", onCancel);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        cancel?.removeEventListener("abort", onCancel);
        reject(e);
      },
    );
  });
}
