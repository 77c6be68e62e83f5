import { spawn } from "node:child_process";
import type { Logger } from "@idem/runtime";
import type { Config, Job } from "@idem/schema";
import { IdemError } from "@idem/schema";
import { describeAgentStdout } from "./output-excerpt.js";

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
 * The agent command protocol of DESIGN.md: spawns `agents.<name>.command` without a shell, writes
 * the Job as JSON to stdin, sets `IDEM_JOB_ID`, reads one AgentOutput JSON from stdout; stderr goes
 * to the log. The child is killed (SIGKILL) when the signal aborts.
 * @throws AGENT_FAILED on a non-zero exit, TIMEOUT when aborted, INVALID_INPUT when stdout is not
 * one JSON value, OUTPUT_TOO_LARGE beyond `limits.maxOutputBytes`, NOT_FOUND for an unconfigured agent.
 */
export function createCommandRunner(config: Config): AgentRunner {
  return (job, { signal, log }) =>
    new Promise<unknown>((resolve, reject) => {
      const agent = config.agents[job.agent];
      if (!agent) {
        reject(new IdemError("NOT_FOUND", `agent "${job.agent}" is not configured`));
        return;
      }
      const [program, ...args] = agent.command as [string, ...string[]];
      const child = spawn(program, args, {
        cwd: config.dir,
        env: { ...process.env, IDEM_JOB_ID: job.jobId },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
      });
      const max = config.limits.maxOutputBytes;
      const chunks: Buffer[] = [];
      let size = 0;
      let failure: IdemError | undefined;
      let stderrTail = "";
      const kill = () => {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
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
        reject(
          new IdemError("AGENT_FAILED", `agent ${job.agent} could not start: ${e.message}`, {
            cause: e,
          }),
        );
      });
      child.once("close", (code, sig) => {
        signal.removeEventListener("abort", onAbort);
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
        const text = Buffer.concat(chunks).toString("utf8").trim();
        try {
          resolve(JSON.parse(text));
        } catch (e) {
          reject(
            new IdemError(
              "INVALID_INPUT",
              `agent ${job.agent} did not print one JSON value on stdout (${describeAgentStdout(text)}); logs belong on stderr`,
              { cause: e },
            ),
          );
        }
      });
    });
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
