import { isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { ApprovalsConfigSchema, NOTICE_AGENT } from "./approvals-config.js";
import { ms, positiveMs } from "./config-parts.js";
import { CredentialsConfigSchema } from "./credentials-config.js";
import { AGENT_PATTERN } from "./ids.js";
import { JournalUrlSchema, journalUrlOf } from "./journal-url.js";
import { KindConfigSchema } from "./kinds-config.js";
import { McpConfigSchema } from "./mcp-config.js";
import { NatsConfigSchema } from "./nats-config.js";
import { urlHasCredentials } from "./redact-url.js";

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
 * The sections of `idem.config.json` that idem's own processes read, as written by a person.
 *
 * Every field optional with its default, unknown keys refused. The effect kinds' own sections
 * (their targets) are not here: each kind parses its own (`Config.sections`). Use `parseConfig`,
 * which also resolves paths and checks what zod cannot.
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
  approvals: ApprovalsConfigSchema,
});

type ParsedConfig = z.infer<typeof ConfigFileSchema>;
/** A parsed `agents.<name>`. */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
/** A parsed `telemetry` section, defaults filled. */
export type TelemetryConfig = z.infer<typeof TelemetryConfigSchema>;

/**
 * A loaded config: defaults filled, paths absolute, `dir` the folder of the config file. The
 * effect kinds' sections (`sections`: every other top-level key, as written) are parsed by the
 * kinds that own them when the kinds are loaded.
 */
export type Config = ParsedConfig & {
  dir: string;
  file: string | null;
  /** The top-level sections that belong to effect kinds, by name, as written (JSON). */
  sections: Readonly<Record<string, unknown>>;
};

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
  /**
   * The names of the top-level sections the effect kinds own (`loadKinds` parses each with its
   * kind): any other unknown key is refused. Without it, every unknown top-level key is kept as a
   * kind's section, refused later when no kind owns it.
   */
  sections?: readonly string[] | undefined;
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
  const { own, sections, unknown } = splitSections(raw ?? {}, options.sections);
  const parsed = ConfigFileSchema.safeParse(own);
  const issues: ConfigIssue[] = [];
  if (unknown.length > 0)
    issues.push({
      path: "",
      message: `Unrecognized key${unknown.length > 1 ? "s" : ""}: ${unknown.map((k) => JSON.stringify(k)).join(", ")}`,
    });
  if (!parsed.success) {
    issues.push(
      ...parsed.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message })),
    );
  }
  if (!parsed.success || issues.length > 0) return { ok: false, issues };
  const c = parsed.data;
  const dir = options.dir;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(dir, p));
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
  // An agent's token beside an API open to every caller would narrow nothing.
  const tokened = Object.entries(c.credentials).find(([, cr]) => cr.tokenEnv !== null);
  if (tokened && c.api.token === null)
    issues.push({
      path: "api.token",
      message: `must be set when credentials.${tokened[0]}.tokenEnv gives an agent a token of its own (without it every caller has every right)`,
    });
  if (c.alerts.webhook !== null && urlHasCredentials(c.alerts.webhook))
    issues.push({ path: "alerts.webhook", message: NO_CREDENTIALS });
  const notice = c.approvals.notify?.webhook;
  if (notice && urlHasCredentials(notice))
    issues.push({ path: "approvals.notify.webhook", message: NO_CREDENTIALS });
  if (c.approvals.notify?.slack && c.agents[NOTICE_AGENT] !== undefined)
    issues.push({
      path: `agents.${NOTICE_AGENT}`,
      message: "is reserved to idem's own outputs (approvals.notify.slack): rename the agent",
    });
  const natsNotice = c.approvals.notify?.nats;
  if (natsNotice && natsNotice.url === undefined && c.nats === undefined)
    issues.push({
      path: "approvals.notify.nats.url",
      message: "must be set when the config has no nats section (nor NATS_URL)",
    });
  for (const [name, agent] of Object.entries(c.agents)) {
    // A program named by a relative path (./agents/x.mjs, agents/x.mjs) is relative to the config file.
    const [program, ...args] = agent.command;
    if (program !== undefined && (program.startsWith("./") || program.startsWith("../"))) {
      c.agents[name] = { ...agent, command: [abs(program), ...args] };
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, config: { ...c, dir, file: options.file ?? null, sections } };
}

/**
 * The keys of a config object that idem's own sections have (`own`), the others as the kinds'
 * sections, and those of them that no kind owns when `known` names the kinds' sections.
 */
function splitSections(
  raw: unknown,
  known: readonly string[] | undefined,
): { own: unknown; sections: Record<string, unknown>; unknown: string[] } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return { own: raw, sections: {}, unknown: [] };
  const shape = ConfigFileSchema.shape as Record<string, unknown>;
  const own: Record<string, unknown> = {};
  const sections: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const [key, value] of Object.entries(raw)) {
    if (Object.hasOwn(shape, key)) own[key] = value;
    else if (known === undefined || known.includes(key)) sections[key] = value;
    else unknown.push(key);
  }
  return { own, sections, unknown };
}

/**
 * Why a URL that idem calls with fetch may not carry `user:password@`: fetch refuses such a URL
 * (or idem builds the request from its origin and drops them), so they can never work, and every
 * message naming the URL would have to hide them. Never repeats the URL.
 */
export const NO_CREDENTIALS =
  "carries credentials (user:password@ or token@), which idem can never send from this URL: remove them (docs/security.md, Credentials)";

/**
 * A default config (every default filled) rooted at `dir`, as `idem init` writes it.
 * @throws Error only if the defaults themselves were invalid: a bug in this package.
 */
export function defaultConfig(dir: string): Config {
  const r = parseConfig({}, { dir });
  if (!r.ok) throw new Error("the default config is invalid");
  return r.config;
}
