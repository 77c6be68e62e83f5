import { z } from "zod";
import { AGENT_PATTERN, ALIAS_PATTERN } from "./ids.js";

/** An environment variable's name, as a shell writes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An effect kind's name (`<namespace>.<name>`), as `kinds` and the kit spell it. */
const KIND_NAME = /^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$/;

/**
 * What one agent's credential may record: for each effect kind it names, the aliases (repos,
 * roots, targets, channels: whatever the kind's own `aliases` answer) it may name, or `"*"` for
 * every one. A kind not named is refused; an empty object allows outputs without effects only.
 */
export const AgentScopeSchema = z.record(
  z.string().max(64).regex(KIND_NAME, "must be an effect kind's name (<namespace>.<name>)"),
  z.union([
    z.literal("*"),
    z.array(z.string().regex(ALIAS_PATTERN, "must be an alias: letters, digits, _ and -")),
  ]),
);

/**
 * `credentials.<agent>`: an agent's own credential (docs/security.md, "Credentials per agent").
 * `tokenEnv` names the environment variable holding its bearer token for the HTTP API and MCP
 * (never the token itself); `effects` is its scope. Over NATS the same scope applies to requests
 * on `<subjectPrefix>.submit.<agent>`, which the NATS server's permissions reserve to that agent.
 */
export const CredentialConfigSchema = z.strictObject({
  tokenEnv: z
    .string()
    .regex(ENV_NAME, "must name an environment variable (letters, digits and _)")
    .nullable()
    .default(null),
  effects: AgentScopeSchema.default({}),
});

/** `credentials`: one entry per agent that has a credential of its own. */
export const CredentialsConfigSchema = z
  .record(
    z.string().regex(AGENT_PATTERN, "must be an agent name: a-z, 0-9, _ and -"),
    CredentialConfigSchema,
  )
  .default({});

/** A parsed `credentials.<agent>`. */
export type CredentialConfig = z.infer<typeof CredentialConfigSchema>;
/** A parsed scope: kind name to its aliases, or `"*"`. */
export type AgentScope = z.infer<typeof AgentScopeSchema>;
