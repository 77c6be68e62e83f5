// Where a process's time goes, from V8's sampling profile (`node --cpu-prof`): the samples' self
// time by what ran, native calls (a synchronous `open`, `fdatasync`, `rename`) by their name and
// JavaScript by its package, and the idle share (the event loop waiting: on a child process, on
// libuv's thread pool, on a timer). Wall time, not CPU: a synchronous system call that waits on the
// disk counts in full.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Where a sample's function belongs: a native call's name, else the package or Node's own. */
function bucket(frame) {
  const { url, functionName } = frame;
  if (!url) return functionName.startsWith("(") ? functionName : `${functionName} (native)`;
  const pkg = /\/(packages|apps)\/([^/]+)\//.exec(url);
  if (pkg) return `@idem/${pkg[2]}`;
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dep) return dep[1];
  if (url.startsWith("node:")) return "Node's own JavaScript";
  return url;
}

/**
 * The self time of the one profile in `dir`, by bucket, largest first.
 * @returns {{ totalMs: number, parts: { name: string, ms: number, share: number }[] }}
 */
export function profileParts(dir) {
  const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no .cpuprofile in ${dir}`);
  const p = JSON.parse(readFileSync(join(dir, file), "utf8"));
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const by = new Map();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    total += dt;
    const name = bucket(nodes.get(id).callFrame);
    by.set(name, (by.get(name) ?? 0) + dt);
  });
  const parts = [...by]
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / total }))
    .sort((a, b) => b.ms - a.ms);
  return { totalMs: total / 1000, parts };
}

/** One line for a page: the largest parts, each with its share of the profile. */
export function profileLine({ totalMs, parts }, top = 10) {
  const shown = parts
    .slice(0, top)
    .map((x) => `${x.name} ${(100 * x.share).toFixed(1)}%`)
    .join(", ");
  return `${Math.round(totalMs)} ms sampled: ${shown}`;
}
