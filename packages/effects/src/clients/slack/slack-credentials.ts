import { promises as fs } from "node:fs";
import { dirname } from "node:path";
import type { OpenContext } from "@idem/kit";
import { IdemError, sleep } from "@idem/kit";
import type { SlackOptions } from "../../kinds/slack/slack-options.js";

/**
 * Where `slack.message`'s bot token comes from, and how a new one is had when Slack refuses the
 * current one (`invalid_auth`, `token_expired`, `token_revoked`): read again from the environment,
 * or, with token rotation, refreshed with `oauth.v2.access`. Tokens are only ever a header or a
 * 0600 file: no error, detail or log carries them.
 */
export interface SlackCredentials {
  token(): Promise<string>;
  /** After Slack refused `refused`: another token to try once, or undefined (the refusal stands). */
  renew(refused: string): Promise<string | undefined>;
}

/** `oauth.v2.access` with `grant_type=refresh_token`, as the client sends it (its `ok: true` body). */
export type RefreshCall = (a: {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}) => Promise<Record<string, unknown>>;

/** A rotating token is refreshed when it has less than this left (Slack's SDKs: two hours). */
export const ROTATION_MARGIN_MS = 2 * 3_600_000;

/** The rotation's state, as kept in `stateFile`. */
interface RotationState {
  accessToken: string;
  /** ms since the epoch. */
  expiresAt: number;
  refreshToken: string;
}

function envToken(read: () => string): SlackCredentials {
  let current: string | undefined;
  return {
    token: async () => {
      current ??= read();
      return current;
    },
    async renew(refused) {
      const now = read();
      if (now === refused) return undefined;
      current = now;
      return now;
    },
  };
}

function parseState(text: string): RotationState | undefined {
  try {
    const s = JSON.parse(text) as Partial<RotationState>;
    if (
      typeof s.accessToken === "string" &&
      typeof s.refreshToken === "string" &&
      typeof s.expiresAt === "number"
    )
      return s as RotationState;
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
  return undefined;
}

/** Whether a lock file's holder (its PID) is still running. */
async function held(lock: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number((await fs.readFile(lock, "utf8")).trim());
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw e;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Token rotation: the current pair in `stateFile`, refreshed `ROTATION_MARGIN_MS` before the
 * access token expires, or at once when Slack refuses it. A refresh runs under `<stateFile>.lock`
 * (its holder's PID; a dead holder's lock is taken over): Slack revokes a refresh token once used,
 * so two processes refreshing with the same one would leave one of them with a revoked token.
 * Under the lock the file is read again first: another process may have refreshed already.
 */
function rotatingToken(
  ctx: OpenContext<SlackOptions>,
  rotation: NonNullable<SlackOptions["rotation"]>,
  refresh: RefreshCall,
): SlackCredentials {
  // Absolute: the kind's resolveOptions made it so against the config's folder.
  const file = rotation.stateFile;
  const lock = `${file}.lock`;
  const clientId = ctx.env(rotation.clientIdEnv);
  const clientSecret = ctx.env(rotation.clientSecretEnv);
  let state: RotationState | undefined;
  let rotating: Promise<void> | undefined;

  const read = async (): Promise<RotationState | undefined> => {
    try {
      return parseState(await fs.readFile(file, "utf8"));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  };
  const write = async (s: RotationState) => {
    const tmp = `${file}.${process.pid}.tmp`;
    await fs.writeFile(tmp, JSON.stringify(s), { mode: 0o600 });
    await fs.rename(tmp, file);
  };
  const locked = async <T>(op: () => Promise<T>): Promise<T> => {
    await fs.mkdir(dirname(file), { recursive: true });
    for (let i = 0; ; i++) {
      try {
        await fs.writeFile(lock, String(process.pid), { flag: "wx", mode: 0o600 });
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
        if (!(await held(lock))) await fs.rm(lock, { force: true });
        else if (i > 600)
          throw new IdemError("UNAVAILABLE", `slack.rotation: ${lock} is held by another process`);
        else await sleep(50);
      }
    }
    try {
      return await op();
    } finally {
      await fs.rm(lock, { force: true });
    }
  };
  const fresh = (s: RotationState | undefined, refused: string | undefined) =>
    s !== undefined &&
    s.accessToken !== refused &&
    s.expiresAt - ctx.clock.now() >= ROTATION_MARGIN_MS;

  const rotate = (refused: string | undefined) => {
    rotating ??= locked(async () => {
      const now = await read();
      if (fresh(now, refused)) {
        state = now;
        return;
      }
      const refreshToken = now?.refreshToken ?? ctx.env(rotation.refreshTokenEnv);
      const a = await refresh({ clientId, clientSecret, refreshToken });
      const accessToken = a.access_token;
      const next = a.refresh_token;
      const expiresIn = a.expires_in;
      if (
        typeof accessToken !== "string" ||
        typeof next !== "string" ||
        typeof expiresIn !== "number"
      )
        throw new IdemError("UNAVAILABLE", "oauth.v2.access answered no token pair");
      state = { accessToken, refreshToken: next, expiresAt: ctx.clock.now() + expiresIn * 1000 };
      await write(state);
    }).finally(() => {
      rotating = undefined;
    });
    return rotating;
  };

  return {
    async token() {
      if (!fresh(state, undefined)) {
        state = await read();
        if (!fresh(state, undefined)) await rotate(undefined);
      }
      return (state as RotationState).accessToken;
    },
    async renew(refused) {
      await rotate(refused);
      const now = (state as RotationState).accessToken;
      return now === refused ? undefined : now;
    },
  };
}

/**
 * The credentials the options name: token rotation (`rotation`), else the token in `tokenEnv`.
 * @throws IdemError INVALID_CONFIG when a variable they name is not set (naming it).
 */
export function slackCredentials(
  ctx: OpenContext<SlackOptions>,
  refresh: RefreshCall,
): SlackCredentials {
  if (ctx.options.rotation) return rotatingToken(ctx, ctx.options.rotation, refresh);
  const read = () => ctx.env(ctx.options.tokenEnv);
  read();
  return envToken(read);
}
