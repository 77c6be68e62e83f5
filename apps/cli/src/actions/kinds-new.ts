import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { kindsOf } from "@idem/core";
import { isKindName } from "@idem/kit";
import { defaultConfig } from "@idem/schema";
import type { Command } from "commander";
import { CliError, configPath, EXIT } from "../context.js";
import { kindModuleText, kindTestText } from "./kind-template.js";

/**
 * `idem kinds new <name>`: writes `<dir>/<name>.mjs` (a kind keeping a note per effect as a file),
 * `<dir>/<name>.test.mjs` (its test in process) and the config entry that registers it with a
 * folder of its own as target, so that `idem kinds test <name>` passes as written. Refuses to
 * overwrite a file or an entry.
 */
export async function runKindsNew(
  name: string,
  opts: { dir?: string },
  cmd: Command,
): Promise<void> {
  if (!isKindName(name))
    throw new CliError(
      `${name}: a kind's name is <namespace>.<name> (lowercase letters, digits, _ and -, with a dot)`,
      EXIT.USAGE,
    );
  const own = kindsOf(defaultConfig(process.cwd()));
  if (own.isBuiltIn(name) || own.sectionMissing(name) !== undefined)
    throw new CliError(
      `${name} is one of idem's own kinds; name yours in a namespace of your own`,
      EXIT.USAGE,
    );
  const file = configPath(cmd.optsWithGlobals());
  const config = existsSync(file) ? readConfig(file) : {};
  const kinds = (config.kinds ?? {}) as Record<string, unknown>;
  if (Object.hasOwn(kinds, name))
    throw new CliError(`kinds.${name}: ${file} registers it already`, EXIT.USAGE);
  const base = dirname(file);
  const folder = join(base, opts.dir ?? "kinds");
  const slug = name.replaceAll(".", "-");
  const moduleFile = join(folder, `${slug}.mjs`);
  const testFile = join(folder, `${slug}.test.mjs`);
  for (const f of [moduleFile, testFile])
    if (existsSync(f))
      throw new CliError(`${f} exists: idem kinds new never overwrites`, EXIT.USAGE);
  mkdirSync(folder, { recursive: true });
  writeFileSync(moduleFile, kindModuleText(name), { flag: "wx" });
  writeFileSync(testFile, kindTestText(name, `${slug}.mjs`), { flag: "wx" });
  const module = `./${relative(base, moduleFile)}`;
  const target = `./${slug}-notes`;
  config.kinds = { ...kinds, [name]: { module, options: { dir: target } } };
  const mode = existsSync(file) ? statSync(file).mode & 0o777 : 0o600;
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`, { mode });
  process.stdout.write(
    `wrote ${relative(process.cwd(), moduleFile)} (the kind), ${relative(process.cwd(), testFile)} (its test) and kinds.${name} in ${relative(process.cwd(), file) || file}\n` +
      `next: idem kinds test ${name} --in-process, then idem kinds test ${name} (the drill; its notes go to ${target})\n`,
  );
}

function readConfig(file: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch (e) {
    throw new CliError(`${file} is not JSON: ${(e as Error).message}`, EXIT.USAGE);
  }
  throw new CliError(`${file} is not a JSON object`, EXIT.USAGE);
}
