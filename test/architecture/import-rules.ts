import type { IForbiddenRuleType } from "dependency-cruiser";

/**
 * The folder of each part of the whiteboard (/work/shared/whiteboard.json) that has one (the
 * PostgreSQL adapter is a folder of the journal and the client's rule is its own, below).
 */
export const PART_FOLDERS = {
  schema: "packages/schema",
  journal: "packages/journal",
  effects: "packages/effects",
  git: "packages/git",
  nats: "packages/nats",
  core: "packages/core",
  runtime: "packages/runtime",
  kit: "packages/kit",
  testing: "packages/testing",
  executor: "apps/executor",
  interpreter: "apps/interpreter",
  cli: "apps/cli",
  console: "apps/console",
  mcp: "apps/mcp",
} as const;
export type Part = keyof typeof PART_FOLDERS;

/**
 * The whiteboard's "never" arrows between parts that have a folder: `from` must not import `to`.
 */
export const NEVER: readonly { from: Part; to: Part; why: string }[] = [
  { from: "interpreter", to: "executor", why: "they share only the journal and the schema" },
  { from: "executor", to: "interpreter", why: "they share only the journal and the schema" },
  { from: "executor", to: "effects", why: "the executor applies no effect: record before effect" },
  { from: "journal", to: "effects", why: "the journal knows no target" },
  { from: "journal", to: "nats", why: "the journal knows no broker" },
  { from: "effects", to: "journal", why: "effects know no journal" },
  { from: "git", to: "effects", why: "the git engine knows no kind: the git kinds use it" },
  { from: "git", to: "journal", why: "the git engine knows no journal" },
  { from: "git", to: "nats", why: "the git engine knows no broker" },
  { from: "git", to: "core", why: "the git engine sits below the domain" },
  { from: "core", to: "git", why: "the core reaches git only through the git kinds" },
  { from: "schema", to: "git", why: "the vocabulary has no I/O" },
  { from: "kit", to: "git", why: "the kit knows none of idem's own kinds nor their engine" },
  { from: "effects", to: "nats", why: "kinds are independent of the transport package" },
  { from: "nats", to: "effects", why: "the transport applies no effect" },
  { from: "schema", to: "journal", why: "the vocabulary has no I/O" },
  { from: "schema", to: "effects", why: "the vocabulary has no I/O" },
  { from: "schema", to: "nats", why: "the vocabulary has no I/O" },
  { from: "journal", to: "cli", why: "packages never import apps" },
  { from: "effects", to: "cli", why: "packages never import apps" },
  { from: "nats", to: "cli", why: "packages never import apps" },
  { from: "core", to: "cli", why: "the domain knows no front end" },
  { from: "core", to: "executor", why: "apps wire processes; the domain is below them" },
  { from: "core", to: "interpreter", why: "apps wire processes; the domain is below them" },
  { from: "console", to: "cli", why: "two front ends, one core" },
  {
    from: "cli",
    to: "effects",
    why: "the CLI reaches targets only through core (goal after the core issue)",
  },
  {
    from: "kit",
    to: "effects",
    why: "the kit is the kinds' contract: it knows none of idem's own kinds (issue 46)",
  },
  {
    from: "kit",
    to: "core",
    why: "a kind's author installs the kit alone: it imports nothing of idem's domain (issue 46)",
  },
];

const SRC = "^(packages|apps)/[^/]+/src/";
const under = (folder: string) => `^${folder}/`;

/**
 * The forbidden imports, as dependency-cruiser rules over the source graph (src/ of every package
 * and app, type-only imports included). Each rule's name is what a failure reports.
 */
export const IMPORT_RULES: IForbiddenRuleType[] = [
  {
    name: "no-import-cycle",
    comment: "an import cycle, type-only imports included: modules in a cycle are one module",
    severity: "error",
    from: { path: SRC },
    to: { circular: true },
  },
  {
    name: "no-package-imports-an-app",
    comment: "packages never import apps: apps are composition roots above them",
    severity: "error",
    from: { path: "^packages/" },
    to: { path: "^apps/" },
  },
  // Apps share code only through packages, with one exception, the whiteboard's arrows
  // cli -> executor and cli -> interpreter, and the console and the MCP server the CLI serves: the
  // CLI is the composition root that runs those processes in-process (`idem executor`,
  // `idem interpreter`, `replay --now`, `idem console`, `idem mcp`, `idem up`), so a SIGKILL of
  // that PID kills the real process. Every other app -> app import fails (the console and the MCP
  // server import no app: they call @idem/core; the executor is handed the MCP host by the CLI).
  {
    name: "no-app-imports-another-app",
    comment: "apps share code only through packages (only the CLI may import the two process apps)",
    severity: "error",
    from: { path: "^apps/([^/]+)/", pathNot: "^apps/cli/" },
    to: { path: "^apps/", pathNot: "^apps/$1/" },
  },
  {
    name: "no-app-imports-another-app",
    comment: "apps share code only through packages (only the CLI may import the apps it runs)",
    severity: "error",
    from: { path: "^apps/cli/" },
    to: { path: "^apps/", pathNot: "^apps/(cli|executor|interpreter|console|mcp)/" },
  },
  {
    name: "mcp-reaches-kinds-through-core",
    comment:
      "the MCP server is a front end over @idem/core (the whiteboard's arrow mcp -> core): it reaches the kinds, their targets and NATS only through core",
    severity: "error",
    from: { path: under(PART_FOLDERS.mcp) },
    to: { path: "^packages/(effects|kit|nats)/" },
  },
  {
    name: "sqlite-adapter-only-in-journal",
    comment: "the SQLite adapter is reached only through the journal port (@idem/journal's index)",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.journal) },
    to: { path: "^packages/journal/src/store/sqlite/" },
  },
  {
    name: "better-sqlite3-only-in-journal",
    comment: "only the journal's SQLite adapter talks to better-sqlite3",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.journal) },
    to: { path: "(^|/)(@types/)?better-sqlite3(/|$)" },
  },
  // sql.exec (issue 34) runs the operator's statements in the operator's own database: a target,
  // like a git repo, not idem's journal. Its adapter is the one other place that talks to pg (and
  // to mysql2), importing it when a sql target is first used (docs/kinds/sql.md).
  {
    name: "postgres-driver-only-in-journal",
    comment:
      "only the journal's PostgreSQL adapter, and sql.exec's adapter for the operator's databases, talk to a PostgreSQL driver (pg, or postgres by porsager)",
    severity: "error",
    from: {
      path: SRC,
      pathNot: [under(PART_FOLDERS.journal), under(`${PART_FOLDERS.effects}/src/kinds/sql-exec`)],
    },
    to: { path: "(^|/)(@types/)?(pg|pg-pool|pg-protocol|postgres)(/|$)" },
  },
  {
    name: "mysql-driver-only-in-sql-exec",
    comment: "only sql.exec's adapter for the operator's databases talks to a MySQL driver",
    severity: "error",
    from: { path: SRC, pathNot: under(`${PART_FOLDERS.effects}/src/kinds/sql-exec`) },
    to: { path: "(^|/)(@types/)?(mysql2|mysql|mariadb)(/|$)" },
  },
  {
    name: "postgres-adapter-only-in-journal",
    comment:
      "callers open a journal through @idem/journal's index, never the PostgreSQL adapter's files",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.journal) },
    to: { path: "^packages/journal/src/store/postgres/" },
  },
  {
    name: "nats-io-only-in-nats",
    comment: "all NATS access goes through @idem/nats",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.nats) },
    to: { path: "(^|/)@nats-io/" },
  },
  {
    name: "opentelemetry-only-in-runtime",
    comment:
      "OpenTelemetry is set up and used in @idem/runtime alone: core and the apps use its tracing facade, other packages pass a traceparent as a plain string",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.runtime) },
    to: { path: "(^|/)@opentelemetry/" },
  },
  {
    name: "runtime-below-the-domain",
    comment:
      "@idem/runtime (logger, HTTP server, telemetry) sits below the domain: it imports only @idem/schema of idem's parts",
    severity: "error",
    from: { path: under(PART_FOLDERS.runtime) },
    to: { path: "^(packages|apps)/", pathNot: ["^packages/runtime/", "^packages/schema/"] },
  },
  {
    name: "schema-has-no-io",
    comment:
      "the vocabulary has no I/O: its src imports only itself, zod, canonicalize, crypto, path",
    severity: "error",
    from: { path: under(PART_FOLDERS.schema) },
    to: {
      pathNot: ["^packages/schema/src/", "^(node:)?(crypto|path)$", "(^|/)(zod|canonicalize)(/|$)"],
    },
  },
  {
    name: "kit-imports-only-schema",
    comment:
      "@idem/kit is what a kind's author installs: its src imports only itself, @idem/schema and zod",
    severity: "error",
    from: { path: "^packages/kit/src/", pathNot: "^packages/kit/src/(drill|tester)/" },
    to: { pathNot: ["^packages/kit/src/", "^packages/schema/", "(^|/)zod(/|$)"] },
  },
  {
    name: "kit-imports-only-schema",
    comment:
      "@idem/kit/test runs a kind in process for any test framework: the kit, @idem/schema and node:assert's AssertionError",
    severity: "error",
    from: { path: "^packages/kit/src/tester/" },
    to: { pathNot: ["^packages/kit/src/", "^packages/schema/", "^(node:)?assert$"] },
  },
  {
    name: "kit-imports-only-schema",
    comment:
      "@idem/kit/drill runs the installed idem for a test runner: the kit, @idem/schema and the Node modules that spawn it, nothing of idem's other parts",
    severity: "error",
    from: { path: "^packages/kit/src/drill/" },
    to: {
      pathNot: [
        "^packages/kit/src/",
        "^packages/schema/",
        "^(node:)?(child_process|fs|module|path|url)$",
      ],
    },
  },
  {
    name: "kinds-import-only-the-kit",
    comment:
      "idem's own kinds are written as a kind's author writes one (issue 46): of idem's parts a kind's folder imports the kit alone (besides what @idem/effects shares among its kinds: the sandbox, the transport port; and @idem/git, the git kinds' engine)",
    severity: "error",
    from: { path: "^packages/effects/src/kinds/" },
    to: { path: "^packages/", pathNot: ["^packages/kit/", "^packages/effects/", "^packages/git/"] },
  },
  {
    name: "client-imports-only-schema",
    comment:
      "the agent client ships alone: its src imports only itself and @idem/schema (no broker, journal, core or app)",
    severity: "error",
    from: { path: "^packages/client/src/" },
    to: { pathNot: ["^packages/client/src/", "^packages/schema/", "(^|/)zod(/|$)"] },
  },
  {
    name: "testing-only-in-tests",
    comment: "the harnesses of @idem/testing are for tests, never for shipped code",
    severity: "error",
    from: { path: SRC, pathNot: under(PART_FOLDERS.testing) },
    to: { path: under(PART_FOLDERS.testing) },
  },
  ...NEVER.map(
    (n): IForbiddenRuleType => ({
      name: `never-${n.from}-imports-${n.to}`,
      comment: n.why,
      severity: "error",
      from: { path: under(PART_FOLDERS[n.from]) },
      to: { path: under(PART_FOLDERS[n.to]) },
    }),
  ),
];
