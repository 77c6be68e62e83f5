// The plain-tool side of the benches: the scripts in test/bench/plain run in bash (each times its
// own loop with $EPOCHREALTIME, so no Node spawn cost is counted against the plain tool), whole
// processes are timed with hyperfine, and the page cache is dropped for cold figures where allowed.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = join(dirname(fileURLToPath(import.meta.url)), "..");
export const ROOT = join(BENCH_DIR, "../..");

/** The identity every bench repository commits with (idem takes its author from the config). */
export const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "bench",
  GIT_AUTHOR_EMAIL: "bench@idem.invalid",
  GIT_COMMITTER_NAME: "bench",
  GIT_COMMITTER_EMAIL: "bench@idem.invalid",
};

/** git's own fsync of what a commit writes: the loose objects and the refs (git 2.36+). */
export const GIT_FSYNC = [
  "-c",
  "core.fsync=loose-object,reference",
  "-c",
  "core.fsyncMethod=fsync",
];

/** The path of a plain-tool script, as a reader runs it from the repository root. */
export const script = (name) => relative(ROOT, join(BENCH_DIR, "plain", name));

/**
 * Runs a script of test/bench/plain in bash and answers its stdout lines as numbers (the scripts
 * print the microseconds they timed themselves).
 */
export function bash(name, args, { cwd = ROOT, env = GIT_ENV } = {}) {
  const out = execFileSync("bash", [join(BENCH_DIR, "plain", name), ...args.map(String)], {
    cwd,
    env,
    encoding: "utf8",
    maxBuffer: 1 << 26,
  });
  return out
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => Number(l));
}

/** The shell form of a command line (for the tables: what a reader types). */
export function shellLine(argv) {
  return argv
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`))
    .join(" ");
}

let dropAllowed;
/** True when this process may drop the page cache (root, and /proc/sys/vm writable here). */
export function canDropCaches() {
  if (dropAllowed === undefined) {
    try {
      spawnSync("sync");
      writeFileSync("/proc/sys/vm/drop_caches", "3");
      dropAllowed = true;
    } catch {
      dropAllowed = false;
    }
  }
  return dropAllowed;
}

/** Writes dirty pages back and drops the page cache, dentries and inodes (see canDropCaches). */
export function dropCaches() {
  spawnSync("sync");
  writeFileSync("/proc/sys/vm/drop_caches", "3");
}

let hyperfinePath;
/**
 * hyperfine's path: found on PATH, else installed from Debian with apt-get when this runs as root
 * (BENCH_NO_INSTALL=1 forbids it); null when neither works, or with BENCH_NO_HYPERFINE=1
 * (whole processes are then timed from Node, and the table says so).
 */
export function hyperfine() {
  if (hyperfinePath !== undefined) return hyperfinePath;
  if (process.env.BENCH_NO_HYPERFINE === "1") {
    hyperfinePath = null;
    return null;
  }
  const which = () => spawnSync("sh", ["-c", "command -v hyperfine"], { encoding: "utf8" });
  let found = which();
  if (found.status !== 0 && process.getuid?.() === 0 && process.env.BENCH_NO_INSTALL !== "1") {
    process.stderr.write("bench: hyperfine missing, installing it with apt-get\n");
    const apt = (args) => spawnSync("apt-get", args, { stdio: ["ignore", "ignore", "inherit"] });
    if (apt(["install", "-y", "-q", "hyperfine"]).status !== 0) {
      apt(["update", "-q"]);
      apt(["install", "-y", "-q", "hyperfine"]);
    }
    found = which();
  }
  hyperfinePath = found.status === 0 ? found.stdout.trim() : null;
  if (!hyperfinePath) process.stderr.write("bench: no hyperfine; timing processes from Node\n");
  return hyperfinePath;
}

/** How whole processes are timed here: "hyperfine 1.15.0 (...)" or Node's clock without it. */
export function processTimer() {
  const h = hyperfine();
  if (!h) return "Node's clock around spawnSync (hyperfine was not available)";
  const v = execFileSync(h, ["--version"], { encoding: "utf8" }).trim();
  return `${v} (\`hyperfine -N --runs 1\` for each side of each round)`;
}

/**
 * Times one whole process once: `argv` runs without a shell from the repository root, after
 * `prepare` (an argv too, untimed). Answers its wall-clock seconds. With hyperfine:
 * `hyperfine -N --runs 1 --prepare ...`; without it, spawnSync timed from Node. A process that
 * fails (exit code not 0) throws.
 */
export function timeProcess({ argv, prepare }, { env = GIT_ENV, jsonFile } = {}) {
  const h = hyperfine();
  if (h) {
    const args = ["-N", "--runs", "1", "--style", "none", "--export-json", jsonFile];
    if (prepare) args.push("--prepare", shellLine(prepare));
    args.push(shellLine(argv));
    const r = spawnSync(h, args, { cwd: ROOT, env, encoding: "utf8", maxBuffer: 1 << 26 });
    if (r.status !== 0) throw new Error(`hyperfine exited ${r.status}: ${r.stderr}`);
    const json = JSON.parse(readFileSync(jsonFile, "utf8"));
    return json.results[0].times?.[0] ?? json.results[0].mean;
  }
  if (prepare) run(prepare, env);
  const t0 = process.hrtime.bigint();
  run(argv, env);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function run(argv, env) {
  const [cmd, ...args] = argv;
  const r = spawnSync(cmd, args, { cwd: ROOT, env, stdio: "ignore" });
  if (r.status !== 0) throw new Error(`${shellLine(argv)} exited ${r.status}`);
}
