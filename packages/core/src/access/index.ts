export type { AgentGrant } from "./agent-grant.js";
export { assertCredentialScopes, grantOf, scopeIssues } from "./agent-grant.js";
export type { Credentials, Principal } from "./credentials.js";
export { MIN_AGENT_TOKEN_LENGTH, OPERATOR, resolveCredentials } from "./credentials.js";
