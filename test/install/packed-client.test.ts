// @idem/client installed as its README says (the commands are read from its Install section):
// `npm pack -w @idem/schema -w @idem/client` in the clone, then `npm install` of the two tarballs
// together in an empty directory (the client depends on the schema by version; neither is on the
// registry yet). There a TypeScript agent type-checks
// against the installed declarations (the schema's types reach it through the client's), and a
// 10-line agent submits to a running executor (the clone's built CLI) over HTTP: recorded, then
// duplicate, then read back; the interpreter applies its effect. About 20 s (the pack 2 s, the
// install 2-5 s from the registry, tsc 5 s).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE, REPO, run, start, userEnv, waitFor, workspace } from "./installed.js";

const IDEM = join(REPO, "apps/cli/bin/idem.js");
const TSC = join(REPO, "node_modules/typescript/bin/tsc");

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "idem-client-install-"));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The agent of the test: ten lines, as a user writes it after reading the client's README. */
const AGENT = `import { createClient, fileWrite } from "@idem/client";

const jobId = process.argv[2];
const idem = createClient({ baseUrl: process.env.IDEM_URL, token: process.env.IDEM_TOKEN });
const effects = [fileWrite({ root: "outbox", path: jobId + ".txt", content: "from the client\\n" })];
const output = { jobId, agent: "reporter", summary: "a report", effects };
const first = await idem.submit(output);
const again = await idem.submit(output);
const record = await idem.get(jobId);
console.log(JSON.stringify({ first: first.status, again: again.status, summary: record?.output.summary }));
`;

/** A TypeScript user of the installed package: it compiles only if the declarations resolve. */
const TYPED = `import { type ClientSubmitAnswer, createClient, fileWrite } from "@idem/client";

const idem = createClient({ baseUrl: "http://127.0.0.1:7070" });
const effects = [fileWrite({ root: "outbox", path: "a.txt", content: "hi\\n" })];
export const submitted: Promise<ClientSubmitAnswer> = idem.submit({ jobId: "ts-1", agent: "reporter", effects });
// @ts-expect-error: content is a string (the schema's type); fails to compile if types were any
fileWrite({ root: "outbox", path: "a.txt", content: 42 });
`;

/**
 * The command lines of the Install section of packages/client/README.md (its first sh block), the
 * README's /tmp/idem-packages replaced by `packages`: the one that packs (run in the clone) and the
 * one that installs the tarballs (run in the user's directory). The NATS client's line is left out.
 */
function readmeInstall(packages: string): { pack: string; install: string } {
  const readme = readFileSync(join(REPO, "packages/client/README.md"), "utf8");
  const section = readme.split(/^## Install$/m)[1] ?? "";
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? "";
  const lines = block
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => l.replaceAll("/tmp/idem-packages", packages));
  const packs = lines.filter((l) => /\bnpm pack\b/.test(l));
  const installs = lines.filter((l) => /\bnpm install\b.*\.tgz/.test(l));
  expect(packs, "one npm pack in the README's Install block").toHaveLength(1);
  expect(installs, "one npm install of tarballs in the README's Install block").toHaveLength(1);
  return { pack: packs[0] as string, install: installs[0] as string };
}

/** A command line as the user's shell runs it. */
const shell = (line: string, cwd: string, env: NodeJS.ProcessEnv) =>
  run("/bin/sh", ["-c", line], { cwd, env, timeoutMs: 5 * MINUTE });

describe("@idem/client, packed with @idem/schema and installed into an empty directory", () => {
  it("installs as its README says, type-checks, and a 10-line agent submits to a running executor", async () => {
    const env = userEnv();
    const packages = join(root, "packages");
    const readme = readmeInstall(packages);
    const packed = await shell(readme.pack, REPO, env);
    expect(packed.code, packed.stderr).toBe(0);
    expect(readdirSync(packages).sort()).toEqual([
      "idem-client-0.1.0.tgz",
      "idem-schema-0.1.0.tgz",
    ]);
    const app = join(root, "my-agent");
    mkdirSync(app);
    const installed = await shell(readme.install, app, env);
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stderr).not.toMatch(/EBADENGINE/);

    writeFileSync(join(app, "typed.ts"), TYPED);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "es2022",
          strict: true,
          noEmit: true,
          types: [],
        },
        files: ["typed.ts"],
      }),
    );
    const tsc = await run(process.execPath, [TSC, "-p", "."], {
      cwd: app,
      env,
      timeoutMs: 2 * MINUTE,
    });
    expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);

    // An executor (the clone's CLI) with the HTTP API on a free port, in a workspace of its own.
    const clone = (args: string[], cwd: string) =>
      run(process.execPath, [IDEM, ...args], { cwd, env, timeoutMs: 2 * MINUTE });
    const ws = await workspace(clone, join(root, "executor"));
    const executor = start(process.execPath, [IDEM, "executor", "--log-format", "json"], {
      cwd: ws.dir,
      env,
    });
    try {
      let url = "";
      await waitFor("the executor's HTTP API", () => {
        url = /"url":"(http:\/\/[^"]+)"[^\n]*HTTP API listening/.exec(executor.output())?.[1] ?? "";
        if (executor.child.exitCode !== null) throw new Error(`executor: ${executor.output()}`);
        return url !== "";
      });
      writeFileSync(join(app, "agent.mjs"), AGENT);
      expect(AGENT.trimEnd().split("\n")).toHaveLength(10);
      const agent = await run(process.execPath, ["agent.mjs", "client-1"], {
        cwd: app,
        // idem init wrote api.token: the agent sends it, as examples/client-agent does.
        env: {
          ...env,
          IDEM_URL: url,
          IDEM_TOKEN: (JSON.parse(readFileSync(ws.config, "utf8")) as { api: { token: string } })
            .api.token,
        },
        timeoutMs: MINUTE,
      });
      expect(agent.code, agent.stderr).toBe(0);
      expect(JSON.parse(agent.stdout)).toEqual({
        first: "recorded",
        again: "duplicate",
        summary: "a report",
      });
    } finally {
      await executor.stop();
    }
    const interpreted = await clone(["interpreter", "--once"], ws.dir);
    expect(interpreted.code, interpreted.stderr).toBe(0);
    expect(readFileSync(join(ws.dir, "outbox/client-1.txt"), "utf8")).toBe("from the client\n");
  });
});
