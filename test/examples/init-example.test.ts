// A project in one command (issue 50): from an empty folder, `idem init --example`, then its
// README followed word for word (test/install/readme-steps.ts), with `idem` on the PATH running
// this clone's built CLI (`npm run build` first). test/install/packed-cli.test.ts does the same
// with the packed CLI installed globally.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MINUTE, REPO, run, userEnv } from "../install/installed.js";
import { followReadme, readmeSteps } from "../install/readme-steps.js";

const root = mkdtempSync(join(tmpdir(), "idem-init-example-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A prefix whose bin/idem runs the built CLI, as `npm link` would. */
function linkedPrefix(): string {
  const prefix = join(root, "prefix");
  mkdirSync(join(prefix, "bin"), { recursive: true });
  const shim = join(prefix, "bin/idem");
  writeFileSync(
    shim,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(join(REPO, "apps/cli/bin/idem.js"))} "$@"\n`,
  );
  chmodSync(shim, 0o755);
  return prefix;
}

describe("idem init --example", () => {
  it("makes a project whose README runs as written, with what it says you should see", async () => {
    const env = userEnv(linkedPrefix());
    const dir = join(root, "my-project");
    mkdirSync(dir);
    const init = await run("sh", ["-c", "idem init --example"], {
      cwd: dir,
      env,
      timeoutMs: MINUTE,
    });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("next: idem up, then in a second terminal idem enqueue job.json");

    const readme = readFileSync(join(dir, "README.md"), "utf8");
    const steps = readmeSteps(readme);
    expect(steps.filter((s) => s.kind === "expect").length).toBeGreaterThanOrEqual(5);
    const followed = await followReadme(readme, { dir, env });
    expect(followed.steps).toBe(steps.length);
    // Exactly once: the job enqueued twice was run once, its commit made once.
    const log = await run("git", ["-C", "repos/notes", "log", "--format=%s"], {
      cwd: dir,
      env,
      timeoutMs: MINUTE,
    });
    expect(log.stdout.trim().split("\n")).toEqual(["note: Hello from idem", "start"]);
  });

  it("refuses a folder that holds the example's files, and plain init says what to do next", async () => {
    const env = userEnv(linkedPrefix());
    const dir = join(root, "taken");
    mkdirSync(dir);
    writeFileSync(join(dir, "README.md"), "mine\n");
    const refused = await run("sh", ["-c", "idem init --example"], {
      cwd: dir,
      env,
      timeoutMs: MINUTE,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("README.md");
    expect(readFileSync(join(dir, "README.md"), "utf8")).toBe("mine\n");
    const plain = await run("sh", ["-c", "idem init"], { cwd: dir, env, timeoutMs: MINUTE });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toMatch(/next: add an agent .*\n.*idem init --example/);
  });
});
