import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { defaultConfig } from "@idem/schema";
import type { Command } from "commander";
import { CliError, CONFIG_FILE, configPath, EXIT, printJson, withJournal } from "../context.js";

/** The config `idem init` writes: every section with its defaults, paths relative to the file. */
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
    api: d.api,
    alerts: d.alerts,
  };
}

export function register(program: Command): void {
  program
    .command("init")
    .description("write a default idem.config.json and an empty journal in the current directory")
    .option("--force", "overwrite an existing config")
    .option("--json", "print JSON")
    .action(async (opts: { force?: boolean; json?: boolean; config?: string }) => {
      const file = opts.config ? configPath(opts) : resolve(CONFIG_FILE);
      if (existsSync(file) && !opts.force) {
        throw new CliError(`${file} exists already (use --force to overwrite)`, EXIT.FAILED);
      }
      writeFileSync(file, `${JSON.stringify(initialConfig(), null, 2)}\n`);
      const { loadConfig } = await import("../context.js");
      const config = loadConfig({ config: file });
      mkdirSync(config.journal.archiveDir, { recursive: true });
      await withJournal(config, async () => undefined);
      if (opts.json) printJson({ config: file, journal: config.journal.path });
      else process.stdout.write(`wrote ${file}\ncreated journal ${config.journal.path}\n`);
    });
}
