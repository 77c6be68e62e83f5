import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { openJournalStore } from "@idem/journal";
import { type Config, defaultConfig, journalLocationOf } from "@idem/schema";

/**
 * The config `idem init` writes: every section with its defaults, paths relative to the file
 * (`.idem/journal.db`, `.idem/archive`), durability FULL, no retention, no targets or agents, and
 * a new random `api.token` (256 bits, base64url): the API and the console of a new workspace
 * need it from the start (docs/security.md). Plain JSON ready to serialize; a new token each call.
 */
export function initialConfig(): Record<string, unknown> {
  const d = defaultConfig("/");
  return {
    journal: {
      path: ".idem/journal.db",
      synchronous: "FULL",
      retentionDays: null,
      archiveDir: ".idem/archive",
    },
    repos: {},
    roots: {},
    publish: {},
    http: { targets: {} },
    limits: d.limits,
    agents: {},
    queue: d.queue,
    interpreter: d.interpreter,
    api: { ...d.api, token: randomBytes(32).toString("base64url") },
    alerts: d.alerts,
  };
}

/**
 * Makes a workspace's storage real: the archive folder, and the journal (created with its
 * migrations when missing, then closed): the SQLite file, or on PostgreSQL (`journal.url`) the
 * tables in that database, which must exist already. Idempotent: an existing journal is opened and left as it
 * is, its outputs untouched.
 * @throws the journal's error when it cannot be created or opened (e.g. `DISK_FULL`, `IO`, a file
 * that is not a journal), and Node's error when the archive folder cannot be created.
 */
export async function initWorkspace(config: Config): Promise<void> {
  // The folders it makes (.idem/ and its archive) are its owner's only, as the journal is.
  mkdirSync(config.journal.archiveDir, { recursive: true, mode: 0o700 });
  // The one place a command creates a journal (idem init; the demo's own workspace aside).
  const journal = await openJournalStore(journalLocationOf(config), {
    synchronous: config.journal.synchronous,
    create: true,
  });
  await journal.close();
}
