// What a drill may leave behind once it has exited: nothing. Its processes carry IDEM_DRILL_RUN=<run>
// (lib/teardown.mjs sets it; every child inherits it, agents and servers' watchdogs included), and
// its log names the run, its network namespaces and its bridge.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** What a drill's log says it made: its run ID, namespaces and bridge. */
export interface DrillTraces {
  runId: string;
  namespaces: string[];
  bridges: string[];
}

/** The traces a drill's stderr names (`run <id>`, `network namespace <ns>, bridge <br>`). */
export function drillTraces(stderr: string): DrillTraces {
  const runId = /\brun ([0-9a-f-]{36})\b/.exec(stderr)?.[1];
  if (!runId) throw new Error(`the drill named no run:\n${stderr.slice(-2000)}`);
  const namespaces = new Set<string>();
  const bridges = new Set<string>();
  for (const m of stderr.matchAll(/network namespace (\S+), bridge (\S+)/g)) {
    namespaces.add(m[1] as string);
    bridges.add(m[2] as string);
  }
  return { runId, namespaces: [...namespaces], bridges: [...bridges] };
}

/** Each process still carrying the run's mark, as `<pid> <command line>`. */
function markedProcesses(runId: string): string[] {
  const mark = `IDEM_DRILL_RUN=${runId}`;
  const found: string[] = [];
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`, "latin1").split("\0").includes(mark)) continue;
      const cmd = readFileSync(`/proc/${e}/cmdline`, "latin1").replaceAll("\0", " ").trim();
      found.push(`${e} ${cmd}`);
    } catch {
      // gone, or not readable
    }
  }
  return found;
}

const ipLines = (...args: string[]): string => {
  try {
    return execFileSync("ip", args, { encoding: "utf8" });
  } catch {
    return "";
  }
};

/**
 * What of the drill is still there: its processes, namespaces and bridge. Asked again for a few
 * seconds while something is (a SIGKILLed process's entry in /proc until it is reaped), then
 * answered as it is.
 */
export async function drillLeftovers(traces: DrillTraces): Promise<string[]> {
  const look = () => {
    const netns = ipLines("netns", "list");
    const links = ipLines("-o", "link", "show");
    return [
      ...markedProcesses(traces.runId).map((p) => `process ${p}`),
      ...traces.namespaces.filter((n) => netns.includes(n)).map((n) => `namespace ${n}`),
      ...traces.bridges.filter((b) => links.includes(`${b}:`)).map((b) => `bridge ${b}`),
    ];
  };
  for (let i = 0; i < 25; i++) {
    const left = look();
    if (left.length === 0) return left;
    await new Promise((r) => setTimeout(r, 200));
  }
  return look();
}
