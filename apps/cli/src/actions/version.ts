import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sqliteVersions } from "@idem/journal";
import { EXIT, exitHolder } from "../exit.js";

/** What `idem version --json` prints (docs/cli.md, idem version). */
export interface Versions {
  idem: string;
  node: string;
  /** The SQLite driver the CLI loads, or null when it is not installed. */
  betterSqlite3: string | null;
  /** The SQLite that driver was built with, or null when it does not load. */
  sqlite: string | null;
  /** Why the driver does not load (its native part missing or built for another Node), if so. */
  sqliteError?: string;
}

/**
 * The version of the `@idem/cli` package this module belongs to: the nearest package.json of that
 * name above it (apps/cli in the clone, the installed package's folder for the packed CLI).
 */
function idemVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === "@idem/cli" && manifest.version) return manifest.version;
    }
    if (dirname(dir) === dir) return "unknown";
  }
}

/**
 * The versions of idem, Node, better-sqlite3 and the SQLite it was built with. The journal opens
 * an in-memory database to read SQLite's, which proves the native driver loads in this Node; when
 * it does not, `sqlite` is null and `sqliteError` says why. Never throws.
 */
export function readVersions(): Versions {
  const sqlite = sqliteVersions();
  return {
    idem: idemVersion(),
    node: process.versions.node,
    betterSqlite3: sqlite.driver,
    sqlite: sqlite.sqlite,
    ...(sqlite.error === undefined ? {} : { sqliteError: sqlite.error }),
  };
}

/**
 * `idem version` and `idem --version` (its help: commands/version.ts). Exit 1 when the SQLite
 * driver does not load: the embedded journal cannot be opened in this install.
 */
export async function runVersion(opts: { json?: boolean }): Promise<void> {
  const v = readVersions();
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
  } else {
    const sqlite = v.sqlite ?? `does not load: ${v.sqliteError}`;
    process.stdout.write(
      `idem ${v.idem}\nnode ${v.node}\nbetter-sqlite3 ${v.betterSqlite3 ?? "missing"}\nsqlite ${sqlite}\n`,
    );
  }
  if (v.sqlite === null) exitHolder.code = EXIT.FAILED;
}
