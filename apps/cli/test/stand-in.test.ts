// `idem stand-in github|slack` (issue 50): the stand-ins served by the real built CLI on loopback,
// followed as docs/kinds/github.md's "Try it locally" says: the printed config and token, doctor
// naming the login, a github.issue and a github.comment applied once, a second pass making
// nothing; then SIGTERM ends it (exit 0).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanEnv, IDEM_BIN, idem, type Workspace, workspace } from "./ops-helpers.js";

interface Printed {
  service: string;
  url: string;
  env: Record<string, string>;
  config: Record<string, unknown>;
}

let ws: Workspace | undefined;
let child: ChildProcessWithoutNullStreams | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  ws?.remove();
});

/** Starts `idem stand-in <service> --json` and answers what it printed (its first line). */
function standIn(service: string): Promise<Printed> {
  const c = spawn(process.execPath, [IDEM_BIN, "stand-in", service, "--json"], {
    env: cleanEnv(),
  });
  child = c;
  return new Promise((resolve, reject) => {
    let out = "";
    c.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(JSON.parse(line) as Printed);
    });
    c.on("exit", (code) => reject(new Error(`idem stand-in exited ${code}`)));
  });
}

const exited = (c: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) => {
    if (c.exitCode !== null) resolve(c.exitCode);
    else c.on("exit", (code) => resolve(code));
  });

describe("idem stand-in", () => {
  it("serves GitHub as docs/kinds/github.md says: an issue and a comment applied once", async () => {
    const gh = await standIn("github");
    expect(gh.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Object.keys(gh.env)).toEqual(["GITHUB_TOKEN"]);
    ws = workspace(gh.config);
    const env = { ...gh.env };
    const cfg = ["--config", ws.config];
    const doctor = await idem(["doctor", "--network", ...cfg], { env });
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain("github as idem-bot");
    const file = join(ws.dir, "output.json");
    writeFileSync(
      file,
      JSON.stringify({
        jobId: "try-1",
        agent: "reviewer",
        effects: [
          { kind: "github.issue", repo: "app", title: "Hello from idem" },
          { kind: "github.comment", repo: "app", number: 1, body: "idem was here." },
        ],
      }),
    );
    const submitted = await idem(["submit", file, ...cfg], { env });
    expect(submitted.stdout).toContain("recorded try-1");
    const first = await idem(["interpreter", "--once", ...cfg], { env });
    expect(first.stdout, first.stderr).toContain(
      "interpreter: 1 done, 0 retries scheduled, 0 dead",
    );
    const again = await idem(["interpreter", "--once", ...cfg], { env });
    expect(again.stdout, again.stderr).toContain("interpreter: 0 done");
    // What GitHub (the stand-in) holds, asked over its API as anyone would.
    const ask = async (path: string) => {
      const res = await fetch(`${gh.url}${path}`, {
        headers: { authorization: `Bearer ${gh.env.GITHUB_TOKEN}`, "user-agent": "idem-test" },
      });
      return (await res.json()) as { title?: string; body?: string }[];
    };
    const issues = await ask("/repos/acme/app/issues?state=all");
    expect(issues.filter((i) => i.title === "Hello from idem")).toHaveLength(1);
    const comments = await ask("/repos/acme/app/issues/1/comments");
    expect(comments.filter((c) => c.body?.startsWith("idem was here."))).toHaveLength(1);
    const shown = await idem(["show", "try-1", "--json", ...cfg], { env });
    expect(shown.stdout).toContain("applied");
    const c = child as ChildProcessWithoutNullStreams;
    c.kill("SIGTERM");
    expect(await exited(c)).toBe(0);
  });

  it("serves Slack: doctor names the bot, a message posted once, SIGINT ends it", async () => {
    const sl = await standIn("slack");
    expect(Object.keys(sl.env)).toEqual(["SLACK_BOT_TOKEN"]);
    ws = workspace(sl.config);
    const env = { ...sl.env };
    const cfg = ["--config", ws.config];
    const doctor = await idem(["doctor", "--network", ...cfg], { env });
    expect(doctor.code, doctor.stdout).toBe(0);
    expect(doctor.stdout).toContain("slack as idem-bot in Stand-in");
    const file = join(ws.dir, "output.json");
    writeFileSync(
      file,
      JSON.stringify({
        jobId: "try-2",
        agent: "reviewer",
        effects: [{ kind: "slack.message", channel: "general", text: "Hello from idem" }],
      }),
    );
    expect((await idem(["submit", file, ...cfg], { env })).code).toBe(0);
    const first = await idem(["interpreter", "--once", ...cfg], { env });
    expect(first.stdout, first.stderr).toContain("interpreter: 1 done");
    const again = await idem(["interpreter", "--once", ...cfg], { env });
    expect(again.stdout, again.stderr).toContain("interpreter: 0 done");
    const c = child as ChildProcessWithoutNullStreams;
    c.kill("SIGINT");
    expect(await exited(c)).toBe(0);
  });

  it("refuses a port that is not one (exit 2)", async () => {
    const r = await idem(["stand-in", "github", "--port", "http"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port");
  });
});
