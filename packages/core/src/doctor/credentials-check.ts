// doctor's check of the agents' own credentials (`credentials.<agent>.tokenEnv`): the variables
// are read where doctor runs, as `idem up` and the submit API read them at start.
import { type Config, isIdemError } from "@idem/schema";
import { resolveCredentials } from "../access/credentials.js";
import type { AddFinding } from "./finding.js";

/**
 * A violation for each agent credential whose variable is unset (naming the variable, never a
 * value), then the rest of what the submit API refuses at start (a token too short, one token
 * shared by two credentials), keyed `credentials.<agent>.tokenEnv`. Answers what was checked.
 */
export function checkAgentCredentials(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  add: AddFinding,
): string[] {
  const checked: string[] = [];
  let unset = 0;
  for (const [agent, entry] of Object.entries(config.credentials)) {
    if (entry.tokenEnv === null) continue;
    checked.push(`credentials of ${agent}`);
    const value = env[entry.tokenEnv];
    if (value !== undefined && value !== "") continue;
    unset++;
    add(
      "violation",
      `credentials.${agent}.tokenEnv`,
      `the environment variable ${entry.tokenEnv} is not set (it holds agent ${agent}'s token): idem up and the submit API refuse to start`,
      `export ${entry.tokenEnv}=$(openssl rand -base64 32) where idem runs, and give agent ${agent} the same token`,
    );
  }
  if (unset > 0 || checked.length === 0) return checked;
  try {
    resolveCredentials(config, env);
  } catch (e) {
    if (!isIdemError(e, "INVALID_CONFIG")) throw e;
    const key = typeof e.details?.key === "string" ? e.details.key : "credentials";
    add("violation", key, e.message, "give each credential its own token of 16 characters or more");
  }
  return checked;
}
