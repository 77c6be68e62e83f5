import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfig } from "@idem/schema";
import type { Workspace } from "./interpreter-fixture.js";

/** Where each remote alias lives: its URL and the bare repository behind it (for checks). */
export interface RemoteRepos {
  site: { url: string; path: string };
  docs: { url: string; path: string };
}

/**
 * A workspace in `dir` whose repos `site` and `docs` are remotes (mirrors in `dir/.idem/mirrors`),
 * with an outbox root. `repoPath` and `docsPath` are the bare repositories, so the checks of
 * interpreter-fixture (trailer counts, verify) read the remote branches.
 */
export function createRemoteWorkspace(
  dir: string,
  remotes: RemoteRepos,
  options: {
    interpreter?: Record<string, unknown>;
    journalPath?: string;
    siteBranches?: string[];
  } = {},
): Workspace {
  const outboxPath = join(dir, "outbox");
  mkdirSync(outboxPath, { recursive: true });
  const raw = {
    journal: { path: options.journalPath ?? ".idem/journal.db" },
    repos: {
      site: { url: remotes.site.url, branch: "main", branches: options.siteBranches ?? [] },
      docs: { url: remotes.docs.url, branch: "main" },
    },
    roots: { outbox: { path: "outbox" } },
    interpreter: { leaseMs: 2000, backoffMs: [50, 100], pollMs: 20, ...options.interpreter },
  };
  const configFile = join(dir, "idem.config.json");
  writeFileSync(configFile, JSON.stringify(raw, null, 2));
  const parsed = parseConfig(raw, { dir, file: configFile });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return {
    dir,
    repoPath: remotes.site.path,
    docsPath: remotes.docs.path,
    outboxPath,
    configFile,
    config: parsed.config,
    raw,
  };
}
