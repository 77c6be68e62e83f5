// The CLI as a normal package: `npm pack` of apps/cli gives a tarball that `npm install -g` puts on
// the PATH of an empty directory with no workspace and no access to the repository's node_modules
// (a temp prefix; the npm registry serves the third-party dependencies), and there `idem --help`,
// `idem init`, a submit of an example output of docs/agents.md, `idem interpreter --once`, `idem audit` and the demo
// work, and a submit on a PostgreSQL journal (IDEM_JOURNAL_URL). Slow by nature (the install may build better-sqlite3): one test, generous time limits.
import { execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { startPostgres } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../apps/cli");
const MINUTE = 60_000;

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "idem-install-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (never rejects): exit code and output. */
function run(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Ran> {
  return new Promise((done) => {
    execFile(
      cmd,
      args,
      { cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        done({ code, stdout, stderr: `${stderr}${error && code === 1 ? error.message : ""}` });
      },
    );
  });
}

/** The environment of a user outside the clone: no npm_* of a running npm script, no NODE_PATH. */
function userEnv(prefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) || k === "NODE_PATH" || k.startsWith("IDEM_") || k === "NATS_URL")
      continue;
    if (k.startsWith("VITEST") || k === "NODE_OPTIONS") continue;
    env[k] = v;
  }
  env.PATH = `${join(prefix, "bin")}${delimiter}${process.env.PATH ?? ""}`;
  env.NO_COLOR = "1";
  return env;
}

interface FileWrite {
  kind: "file.write";
  root: string;
  path: string;
  content: string;
  encoding?: "utf8" | "base64";
}

/** The first example output of docs/agents.md (a block after `<!-- idem:output -->`) that only writes files under `outbox`. */
function fileWriteExample(): { jobId: string; effects: FileWrite[] } {
  const doc = readFileSync(resolve(CLI, "../../docs/agents.md"), "utf8");
  for (const m of doc.matchAll(/<!-- idem:output -->\s*```json\n([\s\S]*?)\n```/g)) {
    const output = JSON.parse(m[1] as string) as { jobId: string; effects: FileWrite[] };
    const writes = output.effects.every((e) => e.kind === "file.write" && e.root === "outbox");
    if (output.effects.length > 0 && writes) return output;
  }
  throw new Error("docs/agents.md has no example output that only writes files under outbox");
}

describe("the packed CLI", () => {
  it(
    "installs globally from its tarball into an empty directory and runs init, submit, the interpreter, audit, the console and the demo there",
    async () => {
      const packDir = join(root, "pack");
      const prefix = join(root, "prefix");
      const home = join(root, "home");
      for (const d of [packDir, prefix, home]) mkdirSync(d);
      const env = userEnv(prefix);

      const packed = await run("npm", ["pack", "--pack-destination", packDir], {
        cwd: CLI,
        env,
        timeoutMs: 3 * MINUTE,
      });
      expect(packed.code, packed.stderr).toBe(0);
      const tarballs = readdirSync(packDir).filter((f) => f.endsWith(".tgz"));
      expect(tarballs).toHaveLength(1);
      const tarball = join(packDir, tarballs[0] as string);

      // What the README says: npm install -g of the tarball (better-sqlite3 builds its native part).
      const installed = await run(
        "npm",
        [
          "install",
          "-g",
          "--prefix",
          prefix,
          "--allow-scripts=better-sqlite3",
          "--no-audit",
          "--no-fund",
          tarball,
        ],
        { cwd: home, env, timeoutMs: 8 * MINUTE },
      );
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr).not.toMatch(/EBADENGINE/);
      const manifest = JSON.parse(
        readFileSync(join(prefix, "lib/node_modules/@idem/cli/package.json"), "utf8"),
      ) as { dependencies: Record<string, string> };
      expect(Object.keys(manifest.dependencies).filter((d) => d.startsWith("@idem/"))).toEqual([]);

      const idem = (args: string[], timeoutMs = 2 * MINUTE) =>
        run(join(prefix, "bin/idem"), args, { cwd: home, env, timeoutMs });

      const help = await idem(["--help"]);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/Usage: idem/);

      const init = await idem(["init"]);
      expect(init.code, init.stderr).toBe(0);
      // The root the example output of docs/agents.md writes to.
      const configFile = join(home, "idem.config.json");
      const config = JSON.parse(readFileSync(configFile, "utf8")) as Record<string, unknown>;
      mkdirSync(join(home, "outbox"));
      writeFileSync(
        configFile,
        JSON.stringify({ ...config, roots: { outbox: { path: "outbox" } } }, null, 2),
      );
      const output = fileWriteExample();
      writeFileSync(join(home, "output.json"), JSON.stringify(output));

      const submit = await idem(["submit", "output.json", "--json"]);
      expect(submit.code, submit.stderr).toBe(0);
      expect(JSON.parse(submit.stdout)).toMatchObject({ status: "recorded", jobId: output.jobId });

      const interpreted = await idem(["interpreter", "--once"]);
      expect(interpreted.code, interpreted.stderr).toBe(0);
      for (const e of output.effects) {
        expect(readFileSync(join(home, "outbox", e.path))).toEqual(
          Buffer.from(e.content, e.encoding === "base64" ? "base64" : "utf8"),
        );
      }

      const audit = await idem(["audit", "--json"]);
      expect(audit.code, audit.stdout + audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({ outputs: 1, duplicateEffectsAtTargets: 0 });

      // The console is bundled too: it serves the overview of this journal.
      const consoleProcess = spawn(join(prefix, "bin/idem"), ["console", "--port", "0"], {
        cwd: home,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      try {
        const url = await new Promise<string>((resolveUrl, reject) => {
          let out = "";
          consoleProcess.stdout?.on("data", (d: Buffer) => {
            out += d.toString();
            const m = /(http:\/\/\S+?)\s/.exec(out);
            if (m?.[1]) resolveUrl(m[1]);
          });
          consoleProcess.once("exit", (code) => reject(new Error(`idem console exited ${code}`)));
        });
        // `idem init` wrote api.token: the console asks for it.
        const auth = { authorization: `Bearer ${(config.api as { token: string }).token}` };
        const page = await fetch(url, { headers: auth });
        expect(page.status).toBe(200);
        expect(await page.text()).toContain("idem");
        const overview = (await (await fetch(`${url}/?format=json`, { headers: auth })).json()) as {
          status?: { outputs?: number };
        };
        expect(overview.status?.outputs).toBe(1);
      } finally {
        consoleProcess.kill("SIGTERM");
      }

      // The same submit on a PostgreSQL journal: the packed CLI carries that store's migrations too.
      await using pg = await startPostgres();
      const pgUrl = await pg.createDatabase("packed_cli");
      const onPostgres = (args: string[]) =>
        run(join(prefix, "bin/idem"), args, {
          cwd: home,
          env: { ...env, IDEM_JOURNAL_URL: pgUrl },
          timeoutMs: 2 * MINUTE,
        });
      const pgSubmit = await onPostgres(["submit", "output.json", "--json"]);
      expect(pgSubmit.code, pgSubmit.stderr).toBe(0);
      expect(JSON.parse(pgSubmit.stdout)).toMatchObject({ status: "recorded" });
      const pgStatus = await onPostgres(["status", "--json"]);
      expect(pgStatus.code, pgStatus.stderr).toBe(0);
      expect(JSON.parse(pgStatus.stdout)).toMatchObject({ outputs: 1 });

      const demo = await idem(["demo"], 6 * MINUTE);
      expect(demo.code, demo.stdout.slice(-2000) + demo.stderr.slice(-2000)).toBe(0);
    },
    20 * MINUTE,
  );
});
