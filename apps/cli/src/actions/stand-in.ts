import { onStopSignal } from "@idem/runtime";
import { startGitHubStandIn, startSlackStandIn } from "@idem/stand-ins";
import { CliError, EXIT } from "../exit.js";

/** What `idem stand-in` prints: where it is, what to export, what to put in the config. */
interface Served {
  service: "github" | "slack";
  url: string;
  env: Record<string, string>;
  config: Record<string, unknown>;
  /** What it holds, for people. */
  holds: string;
  stop(): Promise<void>;
}

async function serveGitHub(port: number): Promise<Served> {
  const gh = await startGitHubStandIn({ port });
  gh.createRepo({ owner: "acme", name: "app" });
  gh.addIssue("acme", "app", { title: "Try idem", body: "An issue to comment on." });
  return {
    service: "github",
    url: gh.url,
    env: { GITHUB_TOKEN: gh.token },
    config: { github: { baseUrl: gh.url, repos: { app: { owner: "acme", name: "app" } } } },
    holds: `repository acme/app (alias app, branch main) with issue #1 "Try idem"; the token acts as ${gh.login}`,
    stop: () => gh.stop(),
  };
}

async function serveSlack(port: number): Promise<Served> {
  const slack = await startSlackStandIn({ port });
  const general = slack.createChannel({ name: "general" });
  return {
    service: "slack",
    url: slack.url,
    env: { SLACK_BOT_TOKEN: slack.token },
    config: { slack: { baseUrl: slack.url, channels: { general } } },
    holds: `channel #general (${general}, alias general) with the bot a member; the bot is ${slack.identity.user} in ${slack.identity.team}`,
    stop: () => slack.stop(),
  };
}

function portOf(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new CliError(`--port must be a port number (0-65535), not ${value}`, EXIT.USAGE);
  return n;
}

/** `idem stand-in github|slack`, imported when it runs (its options and help: commands/stand-in.ts). */
export async function runStandIn(
  service: "github" | "slack",
  opts: { port?: string; json?: boolean },
): Promise<void> {
  const port = portOf(opts.port);
  let served: Served;
  try {
    served = await (service === "github" ? serveGitHub(port) : serveSlack(port));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") throw e;
    throw new CliError(`port ${port} on 127.0.0.1 is taken: pick another with --port`, EXIT.FAILED);
  }
  const { stop: _stop, holds, ...shown } = served;
  if (opts.json) process.stdout.write(`${JSON.stringify({ ...shown, holds })}\n`);
  else {
    const section = JSON.stringify(served.config, null, 2).split("\n").slice(1, -1).join("\n");
    const exports = Object.entries(served.env).map(([k, v]) => `  export ${k}=${v}`);
    process.stdout.write(
      [
        `${service === "github" ? "GitHub" : "Slack"} stand-in on ${served.url} (in memory: gone when it stops)`,
        `It holds ${holds}.`,
        "",
        "In the shell that runs idem:",
        ...exports,
        "",
        "In idem.config.json:",
        section,
        "",
        "Ctrl-C stops it.",
        "",
      ].join("\n"),
    );
  }
  await new Promise<void>((resolve) => {
    onStopSignal(() => resolve());
  });
  await served.stop();
}
