/**
 * The GitHub stand-in's App endpoints (`GET /app`, `POST /app/installations/{id}/access_tokens`,
 * both with the App's JWT) and `GET /users/{username}`, which shows a bot (`<slug>[bot]`) as
 * GitHub does: `type: "Bot"`.
 */
import { errorAnswer, type RouteAnswer } from "./github-answers.js";
import type { AppRecord } from "./github-apps.js";
import { type Bases, iso, userJson } from "./github-json.js";
import type { RouteContext } from "./github-routes.js";

type Json = Record<string, unknown>;

/** The App's permissions as GitHub shows them (what idem's kinds need). */
const PERMISSIONS = { issues: "write", pull_requests: "write", metadata: "read" };

function appJson(b: Bases, app: AppRecord): Json {
  return {
    id: app.id,
    slug: app.slug,
    node_id: `A_${Buffer.from(`A${app.id}`).toString("base64").replace(/=+$/, "")}`,
    client_id: app.clientId,
    owner: userJson(b, app.owner),
    name: app.name,
    description: null,
    external_url: `${b.html}/apps/${app.slug}`,
    html_url: `${b.html}/apps/${app.slug}`,
    created_at: iso(app.createdAt),
    updated_at: iso(app.createdAt),
    permissions: PERMISSIONS,
    events: [],
  };
}

/** A public user (`GET /users/{username}`), with the fields GitHub's description requires. */
function publicUserJson(b: Bases, c: RouteContext, login: string): Json {
  const u = c.state.user(login);
  return {
    ...userJson(b, u),
    name: u.type === "Bot" ? null : u.login,
    company: null,
    blog: "",
    location: null,
    email: null,
    hireable: null,
    bio: null,
    public_repos: 0,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: iso(1_262_304_000_000),
    updated_at: iso(1_262_304_000_000),
  };
}

/** The App endpoints and `GET /users/{username}`, by `method template`. */
export const APP_ROUTES: Record<string, (c: RouteContext) => RouteAnswer> = {
  "get /app": (c) =>
    c.app ? { status: 200, body: appJson(c.bases, c.app) } : errorAnswer(401, "Bad credentials"),
  "post /app/installations/{installation_id}/access_tokens": (c) => {
    const inst = c.auth.installations.get(Number(c.path.installation_id));
    if (!c.app || !inst || inst.app.id !== c.app.id) return errorAnswer(404, "Not Found", c.docs);
    const { token, expiresAt } = c.auth.mint(inst);
    return {
      status: 201,
      body: {
        token,
        expires_at: iso(expiresAt),
        permissions: PERMISSIONS,
        repository_selection: "all",
      },
    };
  },
  "get /users/{username}": (c) => {
    const login = String(c.path.username);
    return c.state.users.has(login.toLowerCase())
      ? { status: 200, body: publicUserJson(c.bases, c, login) }
      : errorAnswer(404, "Not Found", c.docs);
  },
};
