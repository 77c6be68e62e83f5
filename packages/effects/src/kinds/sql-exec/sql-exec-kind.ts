import { defineEffectKind } from "@idem/kit";
import { checkKey } from "../../sandbox.js";
import { SqlExecSpecSchema } from "./spec.js";
import { sqlDoctor } from "./sql-doctor.js";
import { firstTargetAlias, SqlOptionsSchema, sqlTarget } from "./sql-options.js";
import { boundStatements, checkStatements } from "./sql-params.js";
import { SqlTargets } from "./sql-targets.js";
import { applyStatements, probeKey, SQL_FAULT_POINTS, scanKeys } from "./sql-transaction.js";

/**
 * `sql.exec`: statements the config defines, run with the agent's parameters in one transaction
 * at a configured PostgreSQL, MySQL or MariaDB target, together with a row of idem's key table
 * (docs/kinds/sql.md). Exactly once: the key commits with the statements or not at all, so after a
 * crash at any point the probe knows, and nothing ends `uncertain`.
 */
export const sqlExecKind = defineEffectKind({
  name: "sql.exec",
  description:
    "Runs statements the config defines, with the agent's parameters, in one transaction at a configured SQL database (PostgreSQL, MySQL, MariaDB), together with idem's key row: exactly once. The agent names statements and gives their parameters; it never sends SQL.",
  guarantee: "exactly-once",
  spec: SqlExecSpecSchema,
  options: SqlOptionsSchema,
  configSection: "sql",
  check(spec, ctx) {
    let target: ReturnType<typeof sqlTarget>;
    try {
      target = sqlTarget(ctx.options, spec.target);
    } catch (e) {
      ctx.issue("target", (e as Error).message.replace(/^target /, ""));
      return;
    }
    checkStatements(spec, target, ctx.issue);
  },
  // Effects on one database apply in recording order (a later row may need an earlier one).
  targets: (spec) => [`sql:${spec.target}`],
  aliases: (spec) => [{ type: "target", name: spec.target }],
  knownAliases: (ctx) => Object.keys(ctx.options.targets).map((name) => ({ type: "target", name })),
  approval: {
    facts: ["statement"],
    factsOf: (spec) => ({ statement: spec.statements.map((s) => s.name) }),
  },
  describe: (spec) => `${spec.target}: ${spec.statements.map((s) => s.name).join(", ")}`,
  open: (ctx) =>
    new SqlTargets(
      ctx.options,
      (v) => ctx.env(v),
      (p) => ctx.fault(p),
    ),
  close: (targets) => targets.close(),
  async probe(spec, call) {
    checkKey(call.key);
    return probeKey(await call.resource.target(spec.target), call.key);
  },
  async apply(spec, call) {
    checkKey(call.key);
    const t = await call.resource.target(spec.target);
    // The key row makes a repeat fail on its unique key inside the transaction, so apply needs no
    // probe of its own; one answers present without opening a transaction.
    if (!call.probed) {
      const p = await probeKey(t, call.key);
      if (p.status === "present") return p.detail;
    }
    const statements = boundStatements(spec, t.target);
    return applyStatements(t, call.key, statements, call.clock.now(), call.resource.fault);
  },
  scan: {
    target: (spec) => `sql:${spec.target}`,
    keys: async (spec, call) => scanKeys(await call.resource.target(spec.target)),
    configured: (ctx) =>
      Object.keys(ctx.options.targets).map((target) => ({
        kind: "sql.exec" as const,
        target,
        statements: [],
      })),
  },
  // Inside the transaction after the statements, and right after COMMIT (docs/kinds/sql.md).
  faultPoints: [SQL_FAULT_POINTS.BEFORE_COMMIT, SQL_FAULT_POINTS.AFTER_COMMIT],
  doctor: sqlDoctor,
  samples: {
    valid: (i, ctx) => ({
      kind: "sql.exec" as const,
      target: firstTargetAlias(ctx.options),
      statements: [{ name: "drill", params: { id: i, note: `idem drill ${i}` } }],
    }),
    invalid: [
      { spec: { kind: "sql.exec", target: "db", statements: [] }, field: "statements" },
      {
        spec: { kind: "sql.exec", target: "no-such-target", statements: [{ name: "drill" }] },
        field: "target",
      },
      {
        spec: { kind: "sql.exec", target: "db", statements: [{ name: "no_such_statement" }] },
        field: "statements.0.name",
      },
      {
        spec: {
          kind: "sql.exec",
          target: "db",
          statements: [{ name: "drill", params: { id: "one", note: "x" } }],
        },
        field: "statements.0.params.id",
        why: "a parameter of another type than the statement declares",
      },
      {
        spec: {
          kind: "sql.exec",
          target: "db",
          statements: [{ name: "drill", params: { id: 1 } }],
        },
        field: "statements.0.params.note",
        why: "a parameter the statement declares is missing",
      },
      {
        spec: {
          kind: "sql.exec",
          target: "db",
          statements: [{ name: "drill", params: { id: 1, note: "x", extra: 2 } }],
        },
        field: "statements.0.params.extra",
      },
      {
        spec: {
          kind: "sql.exec",
          target: "db",
          sql: "DROP TABLE t",
          statements: [{ name: "drill" }],
        },
        field: "",
        why: "an agent never sends SQL",
      },
    ],
  },
});
