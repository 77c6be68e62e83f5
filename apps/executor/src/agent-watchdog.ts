// No agent outlives its executor: an executor that exits kills its agents' process groups itself
// (agent-runner's exit hook), but a SIGKILLed one runs no code. So each executor that runs command
// agents starts one small watchdog process beside it, told of every agent's process group over a
// pipe. When that pipe closes (the executor is gone, however it went), the watchdog SIGKILLs the
// groups still listed and exits: the agents die with their executor, not when the next executor
// on the host takes their jobs over, and no redelivery runs beside a leftover agent.
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

/**
 * The watchdog, run as `node -e`: reads `+<pgid> <start>` and `-<pgid>` lines on stdin, and at its
 * end kills each group still listed. A group is killed only if it is still the one registered:
 * its leader alive with the start time noted (field 22 of /proc/<pid>/stat), or gone (a group
 * whose leader exited keeps its number reserved while any member lives, so the number is still
 * ours). A live process with that number and another start time is someone else's: left alone.
 * SIGINT, SIGTERM and SIGHUP are ignored: a Ctrl-C meant for idem is the executor's to handle.
 */
const WATCHDOG = `
const fs = require("node:fs");
for (const s of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(s, () => {});
const groups = new Map();
const start = (pid) => {
  try {
    const stat = fs.readFileSync("/proc/" + pid + "/stat", "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch { return null; }
};
let rest = "";
process.stdin.on("data", (d) => {
  const lines = (rest + d.toString("utf8")).split("\\n");
  rest = lines.pop();
  for (const l of lines) {
    const m = /^([+-])(\\d+)(?: (\\S+))?$/.exec(l);
    if (!m) continue;
    if (m[1] === "+") groups.set(Number(m[2]), m[3]);
    else groups.delete(Number(m[2]));
  }
});
process.stdin.on("end", () => {
  for (const [pgid, noted] of groups) {
    const now = start(pgid);
    if (now !== null && noted !== "-" && now !== noted) continue;
    try { process.kill(-pgid, "SIGKILL"); } catch {}
  }
  process.exit(0);
});
`;

/** The start time of a process (field 22 of /proc/<pid>/stat), or "-" where /proc cannot tell. */
function startTimeOf(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "-";
  } catch {
    return "-";
  }
}

/**
 * The executor's watchdog: `watch` a group when its agent starts, `forget` it once the group is
 * killed or gone. Started with the first group; started again, with every group still watched,
 * if it dies while the executor lives. Keeps nothing alive: the child and its pipe are unref'd.
 */
export class AgentWatchdog {
  private child: ChildProcess | undefined;
  private readonly groups = new Map<number, string>();

  watch(pgid: number): void {
    const start = startTimeOf(pgid);
    this.groups.set(pgid, start);
    // A watchdog started now is told of every group watched, this one included.
    if (this.child) this.child.stdin?.write(`+${pgid} ${start}\n`);
    else this.start();
  }

  forget(pgid: number): void {
    if (this.groups.delete(pgid)) this.child?.stdin?.write(`-${pgid}\n`);
  }

  private start(): void {
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, ["-e", WATCHDOG], {
        // Its own process group: a signal to the executor's group (a Ctrl-C) does not reach it.
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
      });
    } catch {
      return;
    }
    child.unref();
    const pipe = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
    pipe?.unref?.();
    // A write after the watchdog died (EPIPE) is not the executor's failure: it is started again.
    child.stdin?.on("error", () => {});
    child.once("exit", () => {
      if (this.child === child) this.child = undefined;
    });
    child.once("error", () => {
      if (this.child === child) this.child = undefined;
    });
    this.child = child;
    for (const [pgid, start] of this.groups) child.stdin?.write(`+${pgid} ${start}\n`);
  }
}
