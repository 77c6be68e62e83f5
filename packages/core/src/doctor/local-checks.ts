// doctor's checks of what idem's own processes need on this host: a writable folder, an agent's
// program. The kinds check their own targets (their `doctor`, kind-checks.ts).
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import type { Config } from "@idem/schema";
import type { AddFinding } from "./finding.js";

/** That `path` (named by config `key`, described as `what`) is an existing directory this user can write. */
export function checkWritableDir(key: string, path: string, what: string, add: AddFinding): void {
  if (!existsSync(path)) {
    add("violation", key, `${what} ${path} does not exist`, `mkdir -p ${path}, or fix ${key}`);
    return;
  }
  if (!statSync(path).isDirectory()) {
    add("violation", key, `${what} ${path} is not a directory`, `fix ${key}`);
    return;
  }
  try {
    accessSync(path, constants.W_OK);
  } catch {
    add(
      "violation",
      key,
      `${what} ${path} is not writable by this user`,
      `chown or chmod it for the user idem runs as`,
    );
  }
}

/** A path inside the nearest existing ancestor of `path` (its `dirname` is that ancestor). */
export function nearestExisting(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return join(p, "x");
}

/**
 * That an agent's program can be found: an absolute path, a path relative to the config's folder
 * `dir`, or a name on PATH.
 */
export function checkAgentProgram(
  name: string,
  agent: Config["agents"][string],
  dir: string,
  add: AddFinding,
): void {
  const program = agent.command[0] as string;
  if (!findProgram(program, dir)) {
    add(
      "violation",
      `agents.${name}.command`,
      `program "${program}" is not found${isAbsolute(program) || program.includes("/") ? "" : " on PATH"}`,
      `install it or fix agents.${name}.command (a relative path is relative to the config file)`,
    );
  }
}

function findProgram(program: string, dir: string): boolean {
  if (isAbsolute(program)) return existsSync(program);
  if (program.includes("/")) return existsSync(resolve(dir, program));
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (d !== "" && existsSync(join(d, program))) return true;
  }
  return false;
}
