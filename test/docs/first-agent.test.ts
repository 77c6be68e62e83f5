// docs/agents.md's first agent, followed word for word ("Your first agent, step by step"): in an
// empty folder, with `idem` on the PATH (a shim running this clone's built CLI: `npm run build`
// first), the doc's shell steps run as written, its minimal agent saved as agent.mjs, its job as
// job.json and its first config added to what `idem init` wrote. `idem up` runs until the agent's
// file is there. The one departure: `api.port` 0, so the executor never takes the 7070 of an idem
// someone runs on this machine.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MINUTE, REPO, run, start, userEnv, waitFor } from "../install/installed.js";
import { agentsDocExamples, fencedBlocks } from "./agents-doc-examples.js";

const root = mkdtempSync(join(tmpdir(), "idem-first-agent-"));
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

/** A step's command: the line without its `# comment`. */
const commands = (block: string): string[] =>
  block
    .split("\n")
    .map((l) => l.replace(/\s+#.*$/, "").trim())
    .filter((l) => l !== "");

describe("docs/agents.md's first agent", () => {
  it("runs word for word from an empty folder: init, the agent, enqueue, up, the file written", async () => {
    const env = userEnv(linkedPrefix());
    const dir = join(root, "first-agent");
    mkdirSync(dir);
    const steps = fencedBlocks("steps", "sh");
    expect(steps, "two <!-- idem:steps --> blocks").toHaveLength(2);
    const [setup, go] = steps.map(commands) as [string[], string[]];

    for (const line of setup) {
      const r = await run("sh", ["-c", line], { cwd: dir, env, timeoutMs: 2 * MINUTE });
      expect(r.code, `${line}: ${r.stdout}${r.stderr}`).toBe(0);
    }
    const [agent] = fencedBlocks("agent", "js");
    const doc = agentsDocExamples();
    const [job] = doc.jobs;
    const [firstConfig] = doc.firstConfig;
    if (agent === undefined || job === undefined || firstConfig === undefined)
      throw new Error("docs/agents.md lacks the minimal agent, the job or the first config");
    writeFileSync(join(dir, "agent.mjs"), agent);
    writeFileSync(join(dir, "job.json"), job.block.text);
    const file = join(dir, "idem.config.json");
    const written = JSON.parse(readFileSync(file, "utf8")) as { api: object };
    const added = firstConfig.value as object;
    writeFileSync(
      file,
      JSON.stringify({ ...written, ...added, api: { ...written.api, port: 0 } }, null, 2),
    );

    const [enqueue, up] = go;
    expect(up).toBe("idem up");
    const enqueued = await run("sh", ["-c", enqueue as string], {
      cwd: dir,
      env,
      timeoutMs: 2 * MINUTE,
    });
    expect(enqueued.code, enqueued.stderr).toBe(0);
    expect(enqueued.stdout).toMatch(/enqueued note-1 \(embedded seq 1\)/);

    const jobId = (job.value as { jobId: string }).jobId;
    const note = join(dir, "outbox/notes", `${jobId}.md`);
    const running = start("sh", ["-c", `exec ${up}`], { cwd: dir, env });
    try {
      await waitFor("the agent's note in outbox/notes", () => {
        if (running.child.exitCode !== null) throw new Error(`up exited: ${running.output()}`);
        try {
          return readFileSync(note, "utf8") === "hi\n";
        } catch {
          return false;
        }
      });
    } finally {
      expect((await running.stop("SIGINT")).code, running.output()).toBe(0);
    }
    const show = await run("sh", ["-c", `idem show ${jobId} --json`], {
      cwd: dir,
      env,
      timeoutMs: MINUTE,
    });
    expect(JSON.parse(show.stdout)).toMatchObject({
      runs: [{ state: "done" }],
      effects: [{ state: "applied" }],
    });
  });
});
