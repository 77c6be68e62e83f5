// CPU time of the processes a system runs, read from /proc: for each process of a tree (a root the
// bench started and every live descendant), user + system time of its own (utime, stime) and of its
// children it has reaped (cutime, cstime), so a `git` a worker spawned and waited for counts once,
// in its parent. A tree sampled before and after a run gives the CPU the run took in it; a process
// that starts and exits inside the run is counted by the parent that reaps it. Linux only.
import { execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks per second (`getconf CLK_TCK`; 100 on Linux). */
export const TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** { pid, ppid, ticks } of a process, ticks = utime + stime + cutime + cstime; null when gone. */
function stat(pid) {
  let text;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces), counted from field 3 (state).
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const n = (i) => Number(f[i - 3]);
  return { pid, ppid: n(4), ticks: n(14) + n(15) + n(16) + n(17) };
}

/** Every live process: pid -> stat. */
function allProcesses() {
  const out = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    const s = stat(Number(d));
    if (s) out.set(s.pid, s);
  }
  return out;
}

/**
 * The CPU seconds of the trees rooted at `roots` (PIDs) right now: each root and its live
 * descendants, their own time and their reaped children's. A root already gone counts 0.
 */
export function treeCpuSeconds(roots) {
  const procs = allProcesses();
  const kids = new Map();
  for (const p of procs.values()) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid).push(p.pid);
  }
  let ticks = 0;
  const seen = new Set();
  const walk = (pid) => {
    if (seen.has(pid)) return;
    seen.add(pid);
    const p = procs.get(pid);
    if (!p) return;
    ticks += p.ticks;
    for (const k of kids.get(pid) ?? []) walk(k);
  };
  for (const r of roots) if (r) walk(r);
  return ticks / TICKS;
}

/**
 * Runs `argv` to its end under a shell that reports its whole CPU (the command and everything it
 * reaped) when it exits: resolves { code, stdout, cpuSeconds }. For short processes a run starts and
 * ends (a submission, a loop), whose time no sample of a live tree can see.
 */
export function runCounted(argv, { cwd, env } = {}) {
  const script =
    '"$@" 3>&-; s=$?; read -r -a st < /proc/$$/stat; echo "cpu-ticks $(( st[15] + st[16] ))" >&3; exit $s';
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script, "counted", ...argv], {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let report = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdio[3].on("data", (d) => {
      report += d;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const m = /cpu-ticks (\d+)/.exec(report);
      resolve({ code, stdout, stderr, cpuSeconds: m ? Number(m[1]) / TICKS : null, child });
    });
  });
}
