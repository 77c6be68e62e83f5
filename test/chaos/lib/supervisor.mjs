// The drills' process supervision: an `idem executor` and an `idem interpreter` per host, each
// started again shortly after it exits, armed or not with a fault point (IDEM_FAULT) drawn from the
// kill budget the controller's own SIGKILLs share; every exit counted. drill.mjs (two hosts in one
// folder), hosts-drill.mjs and cluster-drill.mjs differ only in their hosts and in how a host
// spawns (this machine, or a network namespace).
import { appendFileSync } from "node:fs";
import { FAULT_POINTS } from "@idem/schema";
import { sleep } from "./drill-kit.mjs";

const points = Object.values(FAULT_POINTS);
const FAULTS = {
  executor: points.filter((p) => p.startsWith("executor.")),
  interpreter: points.filter((p) => p.startsWith("interpreter.")),
};

/**
 * @param {object} o
 * @param {string} o.idem the CLI's bin (apps/cli/bin/idem.js)
 * @param {string} o.logFile where the processes' stderr goes, each line prefixed with its name
 * @param {() => number} o.random the drill's seeded generator (the same draws, in the same order,
 *   for a seed)
 * @param {number} o.kills the kill budget: controller SIGKILLs and fault points together
 * @param {Set<import("node:child_process").ChildProcess>} o.children every live child, for the
 *   drill's abandon path
 * @param {(...m: string[]) => void} o.log
 * @param {(host: object, argv: string[], options: object) => import("node:child_process").ChildProcess} o.spawn
 */
export function createSupervisor({ idem, logFile, random, kills: budget, children, log, spawn }) {
  const pick = (xs) => xs[Math.floor(random() * xs.length)];
  /** name -> { child, kind, host, killedByUs } */
  const procs = new Map();
  const tally = { controllerKills: 0, faultKills: 0, restarts: 0, otherExits: 0 };
  let stopping = false;
  let faultBudget = budget;
  const kills = () => tally.controllerKills + tally.faultKills;
  const nextFault = (kind) => {
    if (faultBudget <= 0 || random() < 0.4) return undefined;
    return `${pick(FAULTS[kind])}:${1 + Math.floor(random() * (kind === "executor" ? 6 : 12))}`;
  };

  function start(host, kind, fault) {
    const name = `${host.name}/${kind}`;
    const env = { ...process.env, NO_COLOR: "1", IDEM_LOG_LEVEL: "warn" };
    for (const k of ["IDEM_FAULT", "IDEM_JOURNAL_URL", "NATS_URL"]) delete env[k];
    if (fault) env.IDEM_FAULT = fault;
    const cmd =
      kind === "executor" ? ["executor", "--no-api"] : ["interpreter", "--concurrency", "2"];
    const child = spawn(host, [idem, ...cmd, "--config", host.configFile], {
      cwd: host.dir,
      env,
      stdio: ["ignore", "ignore", "pipe"],
    });
    children.add(child);
    child.stderr.on("data", (d) => appendFileSync(logFile, `[${name}] ${d}`));
    const p = { child, kind, host, killedByUs: false };
    procs.set(name, p);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (stopping) return;
      if (signal === "SIGKILL" && !p.killedByUs) tally.faultKills += 1;
      else if (!p.killedByUs) {
        tally.otherExits += 1;
        log(`${name} exited by itself (code ${code}, signal ${signal})`);
      }
      setTimeout(
        () => {
          if (stopping) return;
          tally.restarts += 1;
          start(host, kind, nextFault(kind));
        },
        50 + Math.floor(random() * 200),
      );
    });
  }

  return {
    procs,
    tally,
    kills,
    /** Starts each host's executor and interpreter, unarmed. */
    startAll(hosts) {
      for (const host of hosts) {
        start(host, "executor", undefined);
        start(host, "interpreter", undefined);
      }
    },
    /** The controller's SIGKILL of one process, picked at random (a stopped one too). */
    killOne() {
      const p = procs.get(pick([...procs.keys()]));
      if (p.child.exitCode !== null || p.child.signalCode !== null) return;
      p.killedByUs = true;
      p.child.kill("SIGCONT");
      p.child.kill("SIGKILL");
      tally.controllerKills += 1;
      faultBudget = budget - kills();
    },
    /**
     * The teardown's first step, however the drill ends: no more restarts, SIGKILL (after SIGCONT)
     * to every child still running, and resolves once each has exited.
     */
    async halt() {
      stopping = true;
      const live = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
      const exited = live.map((c) => new Promise((r) => c.once("exit", r)));
      for (const c of live) {
        c.kill("SIGCONT");
        c.kill("SIGKILL");
      }
      await Promise.all(exited);
    },
    /** The end: no more restarts; SIGTERM to all, SIGKILL to what is left 2 s later. */
    async stopAll() {
      stopping = true;
      for (const p of procs.values()) {
        p.child.kill("SIGCONT");
        p.child.kill("SIGTERM");
      }
      await sleep(2000);
      for (const p of procs.values())
        if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
    },
  };
}
