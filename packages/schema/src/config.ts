import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { isSafeBranchName, isSafeBranchPattern } from "./branch-names.js";
import {
  aliasMap,
  HttpTargetSchema,
  ms,
  PublishTargetSchema,
  positiveMs,
  RepoConfigSchema,
  RootConfigSchema,
} from "./config-targets.js";
import { CredentialsConfigSchema } from "./credentials-config.js";
import { AGENT_PATTERN } from "./ids.js";
import { JournalUrlSchema, journalUrlOf } from "./journal-url.js";
import { KIND_SECTIONS, KindConfigSchema } from "./kinds-config.js";
import { McpConfigSchema } from "./mcp-config.js";
import { NatsConfigSchema } from "./nats-config.js";
import { urlHasCredentials } from "./redact-url.js";
import { isRepoPath, repoUrlIssue } from "./repo-url.js";

/**
 * `agents.<name>`: the command the executor runs for a job of that agent, and its timeout. With
 * `mcp`, the agent stages its effects through an MCP server bound to its job instead of printing
 * an output (docs/mcp.md).
 */
export const AgentConfigSchema = z.strictObject({
  command: z.array(z.string().min(1)).min(1, "must name the program to run"),
  timeoutMs: positiveMs.default(900_000),
  mcp: z.boolean().default(false),
});

const journalDefaults = {
  path: ".idem/journal.db",
  url: null,
  synchronous: "FULL",
  retentionDays: null,
  archiveDir: ".idem/archive",
} as const;
const limitsDefaults = { maxOutputBytes: 1_048_576, maxFileBytes: 10_485_760, maxEffects: 100 };
const queueDefaults = {
  ackWaitMs: 300_000,
  maxDeliver: 3,
  backoffMs: [30_000, 120_000],
  maxAckPending: 16,
  pollMs: 100,
  stopGraceMs: 60_000,
};
const interpreterDefaults = {
  leaseMs: 5_000,
  maxAttempts: 5,
  maxLeaseExpiries: 50,
  backoffMs: [1000, 5000, 30_000],
  pollMs: 200,
  metricsPort: null,
  pipeline: 16,
};
const apiDefaults = { host: "127.0.0.1", port: 7070, token: null, maxBodyBytes: 1_048_576 };
const consoleDefaults = {
  host: "127.0.0.1",
  port: 7071,
  readOnly: false,
  auditIntervalMs: 600_000 as number | null,
};
const telemetryDefaults = { otlpUrl: null, serviceName: null, headers: {} };

/**
 * `telemetry`: OpenTelemetry traces, off by default.
 *
 * `otlpUrl` turns them on (else `OTEL_EXPORTER_OTLP_ENDPOINT`): an OTLP/HTTP URL, taken as the
 * traces URL when it has a path and as a base (plus `/v1/traces`) when it has none. `headers` go
 * with every export (an API key); they and any credentials in the URL are never logged.
 */
export const TelemetryConfigSchema = z.strictObject({
  otlpUrl: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .default(null),
  serviceName: z.string().min(1).nullable().default(null),
  headers: z.record(z.string().min(1), z.string()).default({}),
});

/**
 * The whole `idem.config.json` as written by a person.
 *
 * Every field optional with its default, unknown keys refused. Use `parseConfig`, which also
 * resolves paths and checks what zod cannot.
 */
export const ConfigFileSchema = z.strictObject({
  journal: z
    .strictObject({
      path: z.string().min(1).default(journalDefaults.path),
      url: JournalUrlSchema.nullable().default(null),
      synchronous: z.enum(["OFF", "NORMAL", "FULL", "EXTRA"]).default("FULL"),
      retentionDays: z.number().positive().nullable().default(null),
      archiveDir: z.string().min(1).default(journalDefaults.archiveDir),
    })
    .default(journalDefaults),
  repos: aliasMap(RepoConfigSchema),
  roots: aliasMap(RootConfigSchema),
  publish: aliasMap(PublishTargetSchema),
  http: z.strictObject({ targets: aliasMap(HttpTargetSchema) }).default({ targets: {} }),
  ...KIND_SECTIONS,
  kinds: z
    .record(
      z
        .string()
        .max(64)
        .regex(
          /^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$/,
          "must be <namespace>.<name>: lowercase letters, digits, _ and -, with a dot",
        ),
      KindConfigSchema,
    )
    .default({}),
  limits: z
    .strictObject({
      maxOutputBytes: positiveMs.default(limitsDefaults.maxOutputBytes),
      maxFileBytes: positiveMs.default(limitsDefaults.maxFileBytes),
      maxEffects: positiveMs.default(limitsDefaults.maxEffects),
    })
    .default(limitsDefaults),
  agents: z
    .record(
      z.string().regex(AGENT_PATTERN, "must be an agent name: a-z, 0-9, _ and -"),
      AgentConfigSchema,
    )
    .default({}),
  queue: z
    .strictObject({
      ackWaitMs: positiveMs.default(queueDefaults.ackWaitMs),
      maxDeliver: z.number().int().min(1).default(queueDefaults.maxDeliver),
      backoffMs: z.array(positiveMs).default(queueDefaults.backoffMs),
      maxAckPending: z.number().int().min(1).default(queueDefaults.maxAckPending),
      pollMs: positiveMs.default(queueDefaults.pollMs),
      /**
       * How long a stopping executor (SIGTERM, SIGINT, Ctrl-C on `idem up`) waits for the agents in
       * flight before it kills them and gives their jobs back.
       */
      stopGraceMs: ms.default(queueDefaults.stopGraceMs),
    })
    .default(queueDefaults),
  nats: NatsConfigSchema.optional(),
  interpreter: z
    .strictObject({
      leaseMs: positiveMs.default(interpreterDefaults.leaseMs),
      maxAttempts: z.number().int().min(1).default(interpreterDefaults.maxAttempts),
      maxLeaseExpiries: z.number().int().min(1).default(interpreterDefaults.maxLeaseExpiries),
      backoffMs: z.array(ms).min(1).default(interpreterDefaults.backoffMs),
      pollMs: positiveMs.default(interpreterDefaults.pollMs),
      metricsPort: z.number().int().min(0).max(65535).nullable().default(null),
      pipeline: z.number().int().min(1).max(256).default(interpreterDefaults.pipeline),
    })
    .default(interpreterDefaults),
  api: z
    .strictObject({
      host: z.string().min(1).default(apiDefaults.host),
      port: z.number().int().min(0).max(65535).default(apiDefaults.port),
      token: z.string().min(1).nullable().default(null),
      maxBodyBytes: positiveMs.default(apiDefaults.maxBodyBytes),
    })
    .default(apiDefaults),
  credentials: CredentialsConfigSchema,
  console: z
    .strictObject({
      host: z.string().min(1).default(consoleDefaults.host),
      port: z.number().int().min(0).max(65535).default(consoleDefaults.port),
      readOnly: z.boolean().default(consoleDefaults.readOnly),
      /** The background audit's period (docs/console.md); null turns it off. */
      auditIntervalMs: z
        .number()
        .int()
        .min(1000)
        .max(7 * 24 * 3_600_000)
        .nullable()
        .default(consoleDefaults.auditIntervalMs),
    })
    .default(consoleDefaults),
  alerts: z
    .strictObject({
      deadLettersPerHour: z.number().int().min(1).default(3),
      webhook: z.url().nullable().default(null),
    })
    .default({ deadLettersPerHour: 3, webhook: null }),
  telemetry: TelemetryConfigSchema.default(telemetryDefaults),
  mcp: McpConfigSchema,
});

type ParsedConfig = Omit<z.infer<typeof ConfigFileSchema>, "repos"> & {
  repos: Record<string, RepoConfig>;
};
/**
 * A parsed `repos.<alias>`, its path absolute. For a remote (`url` set), `path` and `cacheDir` are
 * both the absolute path of this host's mirror (a bare repository idem builds commits in).
 */
export type RepoConfig = Omit<z.infer<typeof RepoConfigSchema>, "path"> & { path: string };
/** A parsed `roots.<alias>`, its path absolute. */
export type RootConfig = z.infer<typeof RootConfigSchema>;
/** A parsed `publish.<alias>`. */
export type PublishTarget = z.infer<typeof PublishTargetSchema>;
/** A parsed `http.targets.<alias>`. */
export type HttpTarget = z.infer<typeof HttpTargetSchema>;
/** A parsed `agents.<name>`. */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
/** A parsed `telemetry` section, defaults filled. */
export type TelemetryConfig = z.infer<typeof TelemetryConfigSchema>;

/** A loaded config: defaults filled, paths absolute, `dir` the folder of the config file. */
export type Config = ParsedConfig & { dir: string; file: string | null };

/** One problem with a config, named by its key path (`repos.site.branch`). */
export interface ConfigIssue {
  path: string;
  message: string;
}

/** What `parseConfig` answers: the config, or every issue found (never an exception). */
export type ConfigResult = { ok: true; config: Config } | { ok: false; issues: ConfigIssue[] };

/** Formats a zod issue path as `effects.0.repo` (empty for the whole value). Never throws. */
export function issuePath(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join(".");
}

/** Where a config came from and what of the environment it takes in. */
export interface ParseConfigOptions {
  /** The folder the config's relative paths are resolved against. */
  dir: string;
  /** The config file's path, for messages. */
  file?: string | null;
  /** `NATS_URL`: with no `nats` section it switches the transport to JetStream at that URL. */
  natsUrl?: string | undefined;
  /** `IDEM_JOURNAL_URL`: when set, it overrides `journal.url` (the environment wins). */
  journalUrl?: string | undefined;
}

/**
 * Validates a config object (already parsed from JSON) into a Config.
 *
 * It fills defaults, refuses unknown keys and resolves every path relative to `dir` (and an agent
 * program named `./x` or `../x`).
 *
 * Never throws: every problem comes back as an issue with its key path. Pure: it never touches the
 * disk, so a configured target that does not exist is a `doctor` finding, not a load error. The
 * invariants between keys are `checkConfigInvariants`, a separate step.
 */
export function parseConfig(raw: unknown, options: ParseConfigOptions): ConfigResult {
  const parsed = ConfigFileSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })),
    };
  }
  const c = parsed.data;
  const dir = options.dir;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
  const issues: ConfigIssue[] = [];
  const repos: Record<string, RepoConfig> = {};
  for (const [alias, repo] of Object.entries(c.repos)) {
    const resolved = resolveRepo(alias, repo, abs, issues);
    if (resolved) repos[alias] = resolved;
    for (const [i, b] of [repo.branch, ...repo.branches].entries()) {
      if (i === 0 ? !isSafeBranchName(b) : !isSafeBranchPattern(b)) {
        issues.push({
          path: i === 0 ? `repos.${alias}.branch` : `repos.${alias}.branches.${i - 1}`,
          message: `"${b}" is not a safe branch name`,
        });
      }
    }
  }
  for (const root of Object.values(c.roots)) root.path = abs(root.path);
  for (const kind of Object.values(c.kinds))
    if (kind.module.startsWith(".") || isAbsolute(kind.module)) kind.module = abs(kind.module);
  c.journal.path = abs(c.journal.path);
  const url = journalUrlOf(c.journal.url, options.journalUrl);
  if ("url" in url) c.journal.url = url.url;
  else issues.push(url.issue);
  c.journal.archiveDir = abs(c.journal.archiveDir);
  c.mcp.draftDir = abs(c.mcp.draftDir);
  if (c.nats === undefined && options.natsUrl)
    c.nats = NatsConfigSchema.parse({ url: options.natsUrl });
  for (const [alias, t] of Object.entries(c.http.targets)) {
    if (t.probeUrl !== null && !/^https?:\/\//.test(t.probeUrl) && !t.probeUrl.startsWith("/")) {
      issues.push({
        path: `http.targets.${alias}.probeUrl`,
        message: "must be an http(s) URL or a path under baseUrl",
      });
    }
    for (const key of ["baseUrl", "probeUrl"] as const) {
      const url = t[key];
      if (url !== null && urlHasCredentials(url))
        issues.push({ path: `http.targets.${alias}.${key}`, message: NO_CREDENTIALS });
    }
  }
  // An agent's token beside an API open to every caller would narrow nothing.
  const tokened = Object.entries(c.credentials).find(([, cr]) => cr.tokenEnv !== null);
  if (tokened && c.api.token === null)
    issues.push({
      path: "api.token",
      message: `must be set when credentials.${tokened[0]}.tokenEnv gives an agent a token of its own (without it every caller has every right)`,
    });
  if (c.alerts.webhook !== null && urlHasCredentials(c.alerts.webhook))
    issues.push({ path: "alerts.webhook", message: NO_CREDENTIALS });
  for (const [name, agent] of Object.entries(c.agents)) {
    // A program named by a relative path (./agents/x.mjs, agents/x.mjs) is relative to the config file.
    const [program, ...args] = agent.command;
    if (program !== undefined && (program.startsWith("./") || program.startsWith("../"))) {
      c.agents[name] = { ...agent, command: [abs(program), ...args] };
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, config: { ...c, repos, dir, file: options.file ?? null } };
}

/**
 * Why a URL that idem calls with fetch may not carry `user:password@`: fetch refuses such a URL
 * (or idem builds the request from its origin and drops them), so they can never work, and every
 * message naming the URL would have to hide them. Never repeats the URL.
 */
const NO_CREDENTIALS =
  "carries credentials (user:password@ or token@), which idem can never send from this URL: remove them (docs/security.md, Credentials)";

/** Where a remote repo's mirror goes by default, relative to the config file. */
export const MIRROR_DIR = ".idem/mirrors";

/**
 * Exactly one of `path` and `url`; a `url` git can reach without idem holding a credential (a
 * relative repository path resolved like every path); `cacheDir` only beside `url`. Pushes the
 * issues it finds; answers the repo with `path` absolute (the mirror, for a remote).
 */
function resolveRepo(
  alias: string,
  repo: z.infer<typeof RepoConfigSchema>,
  abs: (p: string) => string,
  issues: ConfigIssue[],
): RepoConfig | undefined {
  const key = `repos.${alias}`;
  if (repo.url === undefined) {
    if (repo.path === undefined) {
      issues.push({
        path: key,
        message: "needs path (a repository on this host) or url (one on a server)",
      });
      return undefined;
    }
    if (repo.cacheDir !== undefined) {
      issues.push({
        path: `${key}.cacheDir`,
        message: "is the mirror of a url; a path needs none",
      });
      return undefined;
    }
    return { ...repo, path: abs(repo.path) };
  }
  if (repo.path !== undefined) {
    issues.push({ path: key, message: "has both path and url; give exactly one of the two" });
    return undefined;
  }
  const issue = repoUrlIssue(repo.url);
  if (issue) {
    issues.push({ path: `${key}.url`, message: issue });
    return undefined;
  }
  const url = isRepoPath(repo.url) ? abs(repo.url) : repo.url;
  const cacheDir = abs(repo.cacheDir ?? `${MIRROR_DIR}/${alias}.git`);
  return { ...repo, url, cacheDir, path: cacheDir };
}

/**
 * A default config (every default filled) rooted at `dir`, as `idem init` writes it.
 * @throws Error only if the defaults themselves were invalid: a bug in this package.
 */
export function defaultConfig(dir: string): Config {
  const r = parseConfig({}, { dir });
  if (!r.ok) throw new Error("the default config is invalid");
  return r.config;
}
