// The peers live in test/bench/peers/node_modules, installed from this folder's own package.json and
// package-lock.json (`npm ci`), never as dependencies of idem's packages. The bench installs them
// when they are missing (`npm run bench:peers`); the test only looks (it never downloads).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const PEERS_DIR = fileURLToPath(new URL("..", import.meta.url));

/** The packages the bench runs, by the name the tables give them. */
export const PEER_PACKAGES = {
  "DBOS Transact": "@dbos-inc/dbos-sdk",
  "Restate server": "@restatedev/restate-server",
  "Restate server binary": "@restatedev/restate-server-linux-x64",
  "Restate SDK": "@restatedev/restate-sdk",
  "isomorphic-git": "isomorphic-git",
};

const versionOf = (pkg) => {
  const file = join(PEERS_DIR, "node_modules", pkg, "package.json");
  if (!existsSync(file)) return null;
  return JSON.parse(readFileSync(file, "utf8")).version;
};

/**
 * What is installed: each peer package's version (null when missing) and, when something is
 * missing, why the peers cannot run here.
 * @returns {{ versions: Record<string, string | null>, missing: string[], reason: string | null }}
 */
export function peersInstalled() {
  const versions = {};
  const missing = [];
  for (const [name, pkg] of Object.entries(PEER_PACKAGES)) {
    versions[name] = versionOf(pkg);
    if (versions[name] === null) missing.push(pkg);
  }
  let reason = null;
  if (process.platform !== "linux" || process.arch !== "x64") {
    reason = `the Restate server binary installed here is linux-x64; this is ${process.platform}-${process.arch}`;
  } else if (missing.length > 0) {
    reason = `not installed in ${PEERS_DIR}node_modules: ${missing.join(", ")} (npm run bench:peers installs them with npm ci)`;
  }
  return { versions, missing, reason };
}

/** `npm ci` in the peers' folder (their lockfile, their node_modules). Throws when it fails. */
export function installPeers() {
  process.stderr.write(`peers: installing the peers into ${PEERS_DIR}node_modules (npm ci)\n`);
  const r = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], {
    cwd: PEERS_DIR,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (r.status !== 0) throw new Error(`npm ci in ${PEERS_DIR} exited ${r.status}`);
}
