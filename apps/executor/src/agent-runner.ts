import { spawn } from "node:child_process";
import type { Logger } from "@idem/runtime";
import type { AgentConfig, Config, Job } from "@idem/schema";
import { aliasOf, IdemError, parseStrictJson } from "@idem/schema";
import { AgentWatchdog } from "./agent-watchdog.js";
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
 * An MCP agent's session (docs/mcp.md, "Agents the executor starts"): an MCP server bound to its
 * job, which the agent reaches with `env`, and the job's draft output.
 */
export interface McpAgentSession {
  /** Added to the agent's environment (`IDEM_MCP_URL`, `IDEM_MCP_TOKEN`, `IDEM_MCP_COMMAND`). */
  readonly env: Readonly<Record<string, string>>;
  /** Ends staging and answers the draft output: what the executor records. */
  seal(): Promise<unknown>;
  /** Stops serving; the draft is dropped. */
  close(): Promise<void>;
}

/** Opens an MCP session per run of an agent with `agents.<name>.mcp` (`idem executor` passes @idem/mcp's). */
export interface McpAgentHost {
  open(job: Job, log: Logger): Promise<McpAgentSession>;
}

/** What the command runner needs besides the config. */
export interface CommandRunnerOptions {
  /** The MCP host for the agents with `agents.<name>.mcp`; without it their runs fail INVALID_CONFIG. */
  mcp?: McpAgentHost | undefined;
}

/**
 * The agent command protocol of docs/agents.md ("A command agent"): spawns `agents.<name>.command` without a shell, writes
 * the Job as JSON to stdin, sets `IDEM_JOB_ID`, reads one AgentOutput JSON from stdout; stderr goes
 * to the log. The child runs in its own process group, which is SIGKILLed when the signal aborts and when
 * the child exits (nothing it started outlives it).
 *
 * An agent with `agents.<name>.mcp` (docs/mcp.md) is run the same way with an MCP session of its
 * job open: its environment names the session, its stdout goes to the log as stderr does, and when
 * it exits 0 its draft (the effects it staged) is its output. A run that fails, times out or is
 * killed drops the draft: nothing of it is recorded.
 * @throws AGENT_FAILED on a non-zero exit, TIMEOUT when aborted, INVALID_INPUT when stdout is not
 * one JSON value in UTF-8 or is JSON that parsing would change (a key twice, a big integer), OUTPUT_TOO_LARGE beyond `limits.maxOutputBytes`, NOT_FOUND for an unconfigured agent, INVALID_CONFIG for an MCP agent without an MCP host.
 */
export function createCommandRunner(
  config: Config,
  options: CommandRunnerOptions = {},
): AgentRunner {
  return async (job, context) => {
    const agent = aliasOf(config.agents, job.agent);
    if (!agent) throw new IdemError("NOT_FOUND", `agent "${job.agent}" is not configured`);
    if (!agent.mcp) return spawnAgent(config, job, agent, context);
    if (!options.mcp) throw mcpHostMissing(job.agent);
    const session = await options.mcp.open(job, context.log);
    try {
      await spawnAgent(config, job, agent, context, session.env);
      return await session.seal();
    } finally {
      await session.close();
    }
  };
}

/** An agent with `agents.<name>.mcp` in an executor that has no MCP host to run it with. */
export function mcpHostMissing(agent: string): IdemError {
  return new IdemError(
    "INVALID_CONFIG",
    `agents.${agent}.mcp: this executor has no MCP server for its agents (idem executor hosts one; a library caller passes createExecutor({ mcp }), docs/mcp.md)`,
    { details: { field: `agents.${agent}.mcp` } },
  );
}

/**
 * Runs one agent's command once (see `createCommandRunner`): resolves with its parsed stdout, or,
 * with `mcpEnv`, with nothing (its stdout logged) once it exits 0.
 */
function spawnAgent(
  config: Config,
  job: Job,
  agent: AgentConfig,
  { signal, log }: RunContext,
  mcpEnv?: Readonly<Record<string, string>>,
): Promise<unknown> {
  return new Promise<unknown>((resolve, reject) => {
    const [program, ...args] = agent.command as [string, ...string[]];
    // Its own process group (docs/agents.md, Stopping): a Ctrl-C meant for idem does not reach
    // it, and a kill reaches whatever it started.
    const child = spawn(program, args, {
      cwd: config.dir,
      env: { ...process.env, ...mcpEnv, IDEM_JOB_ID: job.jobId },
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
    // An MCP agent's stdout is no output (its draft is): logged line by line, as stderr is.
    const stdoutLines = mcpEnv ? lineLogger(log, job, "stdout") : undefined;
    child.stdout.on("data", (d: Buffer) => {
      if (stdoutLines) return stdoutLines.write(d);
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
    const stderrLines = lineLogger(log, job, "stderr");
    child.stderr.on("data", (d: Buffer) => {
      stderrLines.write(d);
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
    // What the agent left running in its group dies with it, at its exit: a leftover holding its
    // stdout would otherwise keep "close" from coming, and once the group's last member is reaped
    // its number may be another process's (the leader was reaped just now: not yet).
    child.once("exit", () => group.kill());
    child.once("close", (code, sig) => {
      signal.removeEventListener("abort", onAbort);
      group.forget();
      stderrLines.end();
      stdoutLines?.end();
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
      if (mcpEnv) return resolve(undefined);
      try {
        resolve(agentStdoutValue(job, Buffer.concat(chunks)));
      } catch (e) {
        reject(e);
      }
    });
  });
}

/**
 * The one JSON value an agent printed on stdout.
 * @throws IdemError INVALID_INPUT naming what is wrong with it (logs belong on stderr)
 */
function agentStdoutValue(job: Job, bytes: Buffer): unknown {
  const parsed = parseStrictJson(bytes);
  if (parsed.ok) return parsed.value;
  const why = parsed.issues.map((i) => `${i.path || "(root)"} ${i.message}`).join("; ");
  throw new IdemError(
    "INVALID_INPUT",
    `agent ${job.agent} did not print one JSON value on stdout: ${escapedText(why)} (${describeAgentStdout(bytes.toString("utf8").trim())}); logs belong on stderr`,
    { details: { issues: parsed.issues } },
  );
}

/** Logs an agent's stream line by line (`{ stderr: line }`), its last partial line at `end`. */
function lineLogger(
  log: Logger,
  job: Job,
  stream: "stdout" | "stderr",
): { write(d: Buffer): void; end(): void } {
  let partial = "";
  const line = (text: string) => {
    if (text.length > 0)
      log.info({ jobId: job.jobId, agent: job.agent, [stream]: text }, `agent ${stream}`);
  };
  return {
    write(d) {
      const lines = (partial + d.toString("utf8")).split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) line(l);
    },
    end() {
      line(partial);
      partial = "";
    },
  };
}

/** The process groups of the agents running now: killed when this process exits. */
const liveGroups = new Set<number>();
let exitHook = false;
/** Kills them when this process dies without running its exit hook (a SIGKILL). */
const watchdog = new AgentWatchdog();

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
 * group still tracked is killed when this process exits, and by the watchdog (agent-watchdog.ts)
 * when it dies without exiting (a SIGKILL): an executor leaves no agent behind.
 */
function trackGroup(pid: number | undefined): { kill(): void; forget(): void } {
  if (pid === undefined) return { kill: () => {}, forget: () => {} };
  liveGroups.add(pid);
  watchdog.watch(pid);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const g of liveGroups) killGroup(g);
    });
  }
  return {
    kill: () => killGroup(pid),
    forget: () => {
      liveGroups.delete(pid);
      watchdog.forget(pid);
    },
  };
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
