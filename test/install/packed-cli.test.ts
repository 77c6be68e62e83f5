// The CLI as a normal package, tested as users run it: `npm pack -w @idem/cli` gives a tarball that
// `npm install -g` puts into an empty prefix with no workspace and no access to the repository's
// node_modules (the npm registry serves the third-party dependencies), packed and installed once
// for every test below. There, with the install's bin first on PATH: `idem version`, init, a submit
// of an example output of docs/agents.md, the interpreter, audit and the console; the project
// `idem init --example` makes, its README followed word for word from an empty folder; a real
// nats-server (enqueue, doctor, the executor and its HTTP API, the interpreter, `up` with pretty
// logs and OpenTelemetry traces); a PostgreSQL journal with a git repository on a server (submit,
// the journal's own queue, `up` committing to the remote); and the demo. Most of its time is the
// global install: npm fetches every dependency, and better-sqlite3 installs its prebuilt binary as
// for a user online (test/install/installed.ts localPrebuild; about 45 s); the pack takes ~5 s and
// the tests 30-55 s together (NATS 13-20 s, the demo 7-20 s); and `idem stand-in github` with a
// github.issue applied against it (about 5 s). `npm run test:install-source` runs this file with
// better-sqlite3 compiled as for a user offline (GitHub, which serves the prebuilt binaries, cannot
// be reached): 100-300 s of both cores, too much of CI's time to spend on every run.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startGitDaemon, startNatsServer, startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../../packages/runtime/test/otlp-receiver.js";
import {
  type InstalledCli,
  installCli,
  MINUTE,
  type Ran,
  REPO,
  run,
  start,
  waitFor,
  workspace,
  writerJobs,
} from "./installed.js";
import { followReadme } from "./readme-steps.js";

let root: string;
let cli: InstalledCli;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "idem-install-"));
  cli = await installCli(root, { prebuilt: process.env.IDEM_INSTALL_FROM_SOURCE !== "1" });
  process.stderr.write(
    `packed-cli: npm pack ${cli.seconds.pack} s, npm install -g ${cli.seconds.install} s\n`,
  );
}, 12 * MINUTE);
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

const idem = (args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 2 * MINUTE) =>
  run(cli.bin, args, { cwd, env: { ...cli.env, ...env }, timeoutMs });
const ok = (r: Ran, what: string) => expect(r.code, `${what}: ${r.stdout}${r.stderr}`).toBe(0);
const outbox = (dir: string, jobId: string) => {
  try {
    return readFileSync(join(dir, "outbox", `${jobId}.txt`), "utf8");
  } catch {
    return undefined;
  }
};

interface FileWrite {
  kind: "file.write";
  root: string;
  path: string;
  content: string;
  encoding?: "utf8" | "base64";
}

/** The first example output of docs/agents.md (a block after `<!-- idem:output -->`) that only writes files under `outbox`. */
function fileWriteExample(): { jobId: string; effects: FileWrite[] } {
  const doc = readFileSync(resolve(REPO, "docs/agents.md"), "utf8");
  for (const m of doc.matchAll(/<!-- idem:output -->\s*```json\n([\s\S]*?)\n```/g)) {
    const output = JSON.parse(m[1] as string) as { jobId: string; effects: FileWrite[] };
    const writes = output.effects.every((e) => e.kind === "file.write" && e.root === "outbox");
    if (output.effects.length > 0 && writes) return output;
  }
  throw new Error("docs/agents.md has no example output that only writes files under outbox");
}

describe("the packed CLI, installed globally into an empty prefix", () => {
  it("has no @idem/* dependency, says its versions, and runs init, submit, the interpreter, audit and the console", async () => {
    const manifest = JSON.parse(
      readFileSync(join(cli.prefix, "lib/node_modules/@idem/cli/package.json"), "utf8"),
    ) as { version: string; dependencies: Record<string, string> };
    expect(Object.keys(manifest.dependencies).filter((d) => d.startsWith("@idem/"))).toEqual([]);
    const home = join(root, "home");
    mkdirSync(home);

    const version = await idem(["version", "--json"], home);
    ok(version, "version");
    expect(JSON.parse(version.stdout)).toMatchObject({
      idem: manifest.version,
      node: process.versions.node,
      sqlite: expect.stringMatching(/^3\./),
    });
    expect((await idem(["--version"], home)).stdout).toMatch(/^idem \S+\nnode /);
    const help = await idem(["--help"], home);
    ok(help, "--help");
    expect(help.stdout).toMatch(/Usage: idem/);

    const ws = await workspace(idem, home);
    const output = fileWriteExample();
    writeFileSync(join(home, "output.json"), JSON.stringify(output));
    const submit = await idem(["submit", "output.json", "--json"], home);
    ok(submit, "submit");
    expect(JSON.parse(submit.stdout)).toMatchObject({ status: "recorded", jobId: output.jobId });
    ok(await idem(["interpreter", "--once"], home), "interpreter --once");
    for (const e of output.effects) {
      expect(readFileSync(join(ws.dir, "outbox", e.path))).toEqual(
        Buffer.from(e.content, e.encoding === "base64" ? "base64" : "utf8"),
      );
    }
    const audit = await idem(["audit", "--json"], home);
    ok(audit, "audit");
    expect(JSON.parse(audit.stdout)).toMatchObject({ outputs: 1, duplicateEffectsAtTargets: 0 });

    // The console is bundled too: it serves the overview of this journal.
    const web = start(cli.bin, ["console", "--port", "0"], { cwd: home, env: cli.env });
    try {
      let url = "";
      await waitFor("the console's URL", () => {
        url = /(http:\/\/\S+?)\s/.exec(web.output())?.[1] ?? "";
        if (web.child.exitCode !== null) throw new Error(`console exited: ${web.output()}`);
        return url !== "";
      });
      // `idem init` wrote api.token: the console asks for it.
      const token = (JSON.parse(readFileSync(ws.config, "utf8")) as { api: { token: string } }).api
        .token;
      const auth = { authorization: `Bearer ${token}` };
      const page = await fetch(url, { headers: auth });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("idem");
      const overview = (await (await fetch(`${url}/?format=json`, { headers: auth })).json()) as {
        status?: { outputs?: number };
      };
      expect(overview.status?.outputs).toBe(1);
    } finally {
      await web.stop();
    }
  });

  it("makes a project in one command whose README runs as written (idem init --example, from an empty folder)", async () => {
    const dir = join(root, "example");
    mkdirSync(dir);
    const init = await idem(["init", "--example"], dir);
    ok(init, "init --example");
    expect(init.stdout).toContain("next: idem up");
    const readme = readFileSync(join(dir, "README.md"), "utf8");
    const followed = await followReadme(readme, { dir, env: cli.env });
    expect(followed.steps).toBeGreaterThan(8);
  });

  it("runs on a real nats-server: enqueue, doctor, the executor and its API, the interpreter, and up with pretty logs and traces", async () => {
    await using nats = await startNatsServer();
    await using otlp = await startOtlpReceiver();
    const ws = await workspace(idem, join(root, "nats"), { nats: { url: nats.url } });
    writeFileSync(join(ws.dir, "jobs.jsonl"), writerJobs("n", 3));
    const enqueued = await idem(["enqueue", "jobs.jsonl", "--json"], ws.dir);
    ok(enqueued, "enqueue onto JetStream");
    expect(JSON.parse(enqueued.stdout)).toMatchObject([
      { jobId: "n-1", stream: "IDEM_JOBS", seq: 1, duplicate: false },
      { jobId: "n-2", seq: 2 },
      { jobId: "n-3", seq: 3 },
    ]);

    const executor = start(cli.bin, ["executor", "--log-format", "json"], {
      cwd: ws.dir,
      env: cli.env,
    });
    try {
      let api = "";
      await waitFor("the executor's HTTP API", () => {
        api = /"url":"(http:\/\/[^"]+)"[^\n]*HTTP API listening/.exec(executor.output())?.[1] ?? "";
        if (executor.child.exitCode !== null) throw new Error(`executor: ${executor.output()}`);
        return api !== "";
      });
      // `idem init` wrote api.token: the API asks for it.
      const token = (JSON.parse(readFileSync(ws.config, "utf8")) as { api: { token: string } }).api
        .token;
      const status = await fetch(`${api}/v1/status`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(status.status).toBe(200);
      await waitFor("three outputs recorded", async () => {
        const r = await idem(["status", "--json"], ws.dir);
        return r.code === 0 && JSON.parse(r.stdout).outputs === 3;
      });
      // A second executor on the same API port says who holds it and how to go on.
      const port = new URL(api).port;
      const second = await idem(["executor", "--port", port, "--log-format", "json"], ws.dir);
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/another idem executor serves its HTTP API there.*--no-api/);
    } finally {
      expect((await executor.stop()).code, executor.output()).toBe(0);
    }
    const doctor = await idem(["doctor", "--json"], ws.dir);
    ok(doctor, "doctor");
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      ok: true,
      checked: expect.arrayContaining(["NATS stream and consumers"]),
      findings: [],
    });
    ok(await idem(["interpreter", "--once"], ws.dir), "interpreter --once");
    for (const n of [1, 2, 3]) expect(outbox(ws.dir, `n-${n}`)).toBe(`job ${n}\n`);

    // Two more jobs, run by `up` (both children on NATS), with pretty logs and OTLP traces.
    writeFileSync(join(ws.dir, "more.jsonl"), writerJobs("m", 2));
    ok(await idem(["enqueue", "more.jsonl"], ws.dir), "enqueue more");
    const up = start(cli.bin, ["up", "--log-format", "pretty"], {
      cwd: ws.dir,
      env: { ...cli.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
    });
    try {
      await waitFor("up to apply both jobs", () =>
        [1, 2].every((n) => outbox(ws.dir, `m-${n}`) === `job ${n}\n`),
      );
      await waitFor("the executor's and the interpreter's spans", () => {
        const services = new Set(otlp.spans.map((s) => s.service));
        return services.has("idem-executor") && services.has("idem-interpreter");
      });
    } finally {
      expect((await up.stop()).code, up.output()).toBe(0);
    }
    // pino-pretty's lines ("INFO", no JSON) under up's prefixes, and each child started once.
    expect(up.output()).toMatch(/^executor +\| .*INFO/m);
    expect(up.output()).not.toMatch(/^executor +\| \{"level"/m);
    expect(up.output().match(/^up (executor|interpreter) started/gm)).toHaveLength(2);
    expect(up.output()).not.toMatch(/^up .*exited/m);
  });

  it("runs on a PostgreSQL journal with a git repository on a server: submit, the journal's own queue and up", async () => {
    await using pg = await startPostgres();
    await using daemon = await startGitDaemon();
    const site = daemon.createRepo("site");
    const url = await pg.createDatabase("packed_cli");
    const ws = await workspace(idem, join(root, "pg"), {
      journal: { url },
      repos: { site: { url: site.url } },
    });
    // A commit on the remote (RemoteGit loads simple-git on its first network command).
    const commit = {
      jobId: "git-1",
      agent: "writer",
      effects: [
        {
          kind: "git.commit",
          repo: "site",
          message: "notes: from the installed CLI",
          files: [{ path: "notes/installed.md", content: "# installed\n" }],
        },
      ],
    };
    writeFileSync(join(ws.dir, "output.json"), JSON.stringify(commit));
    const submit = await idem(["submit", "output.json", "--json"], ws.dir);
    ok(submit, "submit");
    expect(JSON.parse(submit.stdout)).toMatchObject({ status: "recorded" });
    writeFileSync(join(ws.dir, "jobs.jsonl"), writerJobs("p", 2));
    ok(await idem(["enqueue", "jobs.jsonl"], ws.dir), "enqueue onto the journal's queue");
    const remoteLog = () =>
      run("git", ["--git-dir", site.path, "log", "--format=%B", "main"], {
        cwd: ws.dir,
        env: cli.env,
        timeoutMs: MINUTE,
      });
    const up = start(cli.bin, ["up"], { cwd: ws.dir, env: cli.env });
    try {
      await waitFor("up to apply both jobs and the commit", async () => {
        const files = [1, 2].every((n) => outbox(ws.dir, `p-${n}`) === `job ${n}\n`);
        return files && /Idem-Effect: git-1\/0/.test((await remoteLog()).stdout);
      });
    } finally {
      expect((await up.stop()).code, up.output()).toBe(0);
    }
    const status = await idem(["status", "--json"], ws.dir);
    ok(status, "status");
    expect(JSON.parse(status.stdout)).toMatchObject({ outputs: 3, jobs: { done: 2 } });
  });

  it("runs the demo, whose last line names the idem on PATH", async () => {
    const dir = join(root, "demo-home");
    mkdirSync(dir);
    const demo = await idem(["demo", "--dir", join(dir, "ws")], dir, {}, 6 * MINUTE);
    expect(demo.code, demo.stdout.slice(-2000) + demo.stderr.slice(-2000)).toBe(0);
    const last = demo.stdout.trimEnd().split("\n").at(-1) ?? "";
    expect(last).toMatch(/export IDEM_CONFIG=\S+; idem status; idem replay --all --dry-run$/);
    const config = /export IDEM_CONFIG=(\S+);/.exec(last)?.[1] as string;
    // What it says works here: `idem status` on the demo's config.
    ok(await idem(["status"], dir, { IDEM_CONFIG: config }), "the demo's idem status");
  });
  it(
    "serves the GitHub stand-in (idem stand-in github), and applies a github.issue against it as docs/kinds/github.md says",
    async () => {
      const dir = mkdtempSync(join(root, "stand-in-"));
      const served = start(cli.bin, ["stand-in", "github", "--json"], { cwd: dir, env: cli.env });
      try {
        await waitFor("the stand-in's first line", () => served.output().includes("\n"), MINUTE);
        const gh = JSON.parse(served.output().split("\n")[0] as string) as {
          url: string;
          env: Record<string, string>;
          config: Record<string, unknown>;
        };
        writeFileSync(join(dir, "idem.config.json"), JSON.stringify(gh.config));
        ok(await idem(["init", "--journal"], dir), "init --journal");
        const doctor = await idem(["doctor", "--network"], dir, gh.env);
        ok(doctor, "doctor --network");
        expect(doctor.stdout).toContain("github as idem-bot");
        const output = {
          jobId: "try-1",
          agent: "reviewer",
          effects: [{ kind: "github.issue", repo: "app", title: "Hello from idem" }],
        };
        writeFileSync(join(dir, "output.json"), JSON.stringify(output));
        ok(await idem(["submit", "output.json"], dir, gh.env), "submit");
        const applied = await idem(["interpreter", "--once"], dir, gh.env);
        expect(applied.stdout, applied.stderr).toContain("interpreter: 1 done");
        const res = await fetch(`${gh.url}/repos/acme/app/issues`, {
          headers: { authorization: `Bearer ${gh.env.GITHUB_TOKEN}`, "user-agent": "idem-test" },
        });
        const titles = ((await res.json()) as { title: string }[]).map((i) => i.title);
        expect(titles.filter((t) => t === "Hello from idem")).toHaveLength(1);
      } finally {
        expect((await served.stop("SIGTERM")).code).toBe(0);
      }
    },
    3 * MINUTE,
  );
});
