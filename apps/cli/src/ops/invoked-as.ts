import { existsSync, realpathSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";

/** Where the running idem came from: the script it was started as, the PATH, the working directory. */
export interface Invocation {
  /** `process.argv[1]`: the bin as it was started (a PATH entry's link, node_modules/.bin/idem, bin/idem.js). */
  script: string;
  /** `$PATH`. */
  path: string | undefined;
  cwd: string;
}

const current = (): Invocation => ({
  script: process.argv[1] ?? "idem",
  path: process.env.PATH,
  cwd: process.cwd(),
});

const real = (file: string): string | undefined => {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
};

/** `s` as one shell word: as is when it has no character a shell treats specially. */
export const shellWord = (s: string): string =>
  /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The command that runs this same idem from the user's shell, for hints such as the demo's last
 * line: `idem` when the `idem` on PATH is this one (a global install, `npm link`), `npx idem` when
 * the nearest node_modules/.bin/idem above the working directory is (the clone), else the script's
 * own path (`node <path>` for a .js file). PATH entries ending in node_modules/.bin are skipped:
 * `npm run` and `npx` put them there for their child only, the user's shell does not have them.
 */
export function invokedAs(how: Invocation = current()): string {
  const self = real(resolve(how.cwd, how.script));
  if (self !== undefined) {
    for (const dir of (how.path ?? "").split(delimiter)) {
      if (dir === "" || /node_modules[\\/]\.bin[\\/]?$/.test(dir)) continue;
      const candidate = join(resolve(how.cwd, dir), "idem");
      if (existsSync(candidate) && real(candidate) === self) return "idem";
      // The first idem on PATH is the one the shell runs: another one there is not this idem.
      if (existsSync(candidate)) break;
    }
    for (let dir = resolve(how.cwd); ; dir = dirname(dir)) {
      const bin = join(dir, "node_modules", ".bin", "idem");
      if (existsSync(bin)) {
        if (real(bin) === self) return "npx idem";
        break;
      }
      if (dirname(dir) === dir) break;
    }
  }
  const script = resolve(how.cwd, how.script);
  return /\.[cm]?js$/.test(script) ? `node ${shellWord(script)}` : shellWord(script);
}
