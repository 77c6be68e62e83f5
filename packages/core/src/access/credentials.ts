import { createHash, timingSafeEqual } from "node:crypto";
import { type Config, IdemError } from "@idem/schema";
import { type AgentGrant, grantOf } from "./agent-grant.js";

/**
 * Who a request comes from: the operator (`api.token`, or anyone where no token is required),
 * with every right, or one agent's credential, held to its grant.
 */
export type Principal =
  | { readonly operator: true }
  | { readonly operator: false; readonly grant: AgentGrant };

/** The operator: every right. */
export const OPERATOR: Principal = Object.freeze({ operator: true });

/** The tokens of a config, resolved from the environment once at start. */
export interface Credentials {
  /** Whether a request must carry a token (`api.token` is set). */
  readonly required: boolean;
  /**
   * The principal an `Authorization: Bearer <token>` header names; undefined when no token is
   * configured to match (a 401). Without `api.token`, every request is the operator's. Compares
   * in constant time against every token (over fixed-length digests: lengths leak nothing).
   */
  authenticate(authorization: string | undefined): Principal | undefined;
}

/** The shortest agent token taken: a shorter one is guessable. */
export const MIN_AGENT_TOKEN_LENGTH = 16;

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/**
 * The config's credentials: `api.token` (the operator's) and each `credentials.<agent>.tokenEnv`
 * read from `env`. The values are never shown: errors name the variable only.
 * @throws IdemError INVALID_CONFIG naming `credentials.<agent>.tokenEnv` when its variable is unset
 * or empty, shorter than {@link MIN_AGENT_TOKEN_LENGTH}, or the same as `api.token` or another
 * agent's token.
 */
export function resolveCredentials(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
): Credentials {
  const operator = config.api.token;
  const agents: { digest: Buffer; principal: Principal }[] = [];
  const seen = new Map<string, string>();
  if (operator !== null) seen.set(operator, "api.token");
  for (const [agent, entry] of Object.entries(config.credentials)) {
    if (entry.tokenEnv === null) continue;
    const key = `credentials.${agent}.tokenEnv`;
    const bad = (message: string): never => {
      throw new IdemError("INVALID_CONFIG", `${key}: ${message}`, { details: { key } });
    };
    const token = env[entry.tokenEnv];
    if (token === undefined || token === "")
      bad(
        `the environment variable ${entry.tokenEnv} is not set (it holds agent ${agent}'s token)`,
      );
    const value = token as string;
    if (value.length < MIN_AGENT_TOKEN_LENGTH)
      bad(
        `${entry.tokenEnv} holds ${value.length} characters; an agent's token needs at least ${MIN_AGENT_TOKEN_LENGTH} (openssl rand -base64 32)`,
      );
    const other = seen.get(value);
    if (other !== undefined)
      bad(`${entry.tokenEnv} holds the same token as ${other}: give each credential its own`);
    seen.set(value, key);
    agents.push({
      digest: digest(value),
      principal: { operator: false, grant: grantOf(config, agent) as AgentGrant },
    });
  }
  const operatorDigest = operator === null ? undefined : digest(operator);
  return {
    required: operator !== null,
    authenticate(authorization) {
      if (operatorDigest === undefined) return OPERATOR;
      const given = /^Bearer\s+(.+)$/i.exec(authorization ?? "")?.[1] ?? "";
      if (given.length === 0) return undefined;
      const d = digest(given);
      // Every comparison runs, whichever matches: the time says nothing of which token it was.
      let found: Principal | undefined = timingSafeEqual(d, operatorDigest) ? OPERATOR : undefined;
      for (const a of agents) if (timingSafeEqual(d, a.digest)) found ??= a.principal;
      return found;
    },
  };
}
