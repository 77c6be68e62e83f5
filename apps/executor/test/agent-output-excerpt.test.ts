// An agent whose stdout is not one JSON value fails with INVALID_INPUT saying what it printed: its
// size and a bounded excerpt, escaped (an agent's bytes are hostile: no raw escape or newline
// reaches a log line or a terminal). Real agent processes.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { silentLogger } from "@idem/runtime";
import { isIdemError, type Job } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createCommandRunner } from "../src/index.js";
import { describeAgentStdout } from "../src/output-excerpt.js";
import { testConfig } from "./helpers.js";

const job: Job = { jobId: "j-1", agent: "writer", input: {} };

/** Runs an agent that writes `stdout` (given as a JS string expression) and returns its error. */
async function failureOf(stdout: string): Promise<Error & { code?: string }> {
  await using dir = await tempDir("idem-excerpt-");
  const agent = join(dir.path, "agent.mjs");
  await writeFile(agent, `process.stdout.write(${stdout});\n`);
  const config = testConfig({
    dir: dir.path,
    journalPath: join(dir.path, "j.db"),
    extra: { agents: { writer: { command: [process.execPath, agent], timeoutMs: 60_000 } } },
  });
  const runner = createCommandRunner(config);
  const err = await runner(job, { signal: new AbortController().signal, log: silentLogger() })
    .then(() => new Error("the agent's output was taken"))
    .catch((e: Error) => e);
  expect(isIdemError(err, "INVALID_INPUT"), String(err)).toBe(true);
  return err;
}

describe("an agent that does not print one JSON value", () => {
  it("is told what it printed: a log line before the JSON, escaped", async () => {
    const err = await failureOf(
      `"starting up\\n" + JSON.stringify({ summary: "ok", effects: [] })`,
    );
    expect(err.message).toContain(
      `(it printed 41 bytes: "starting up\\n{\\"summary\\":\\"ok\\",\\"effects\\":[]}")`,
    );
    expect(err.message).not.toContain("\n");
  });

  it("quotes a long output by its head and tail only, and nothing at all is 'printed nothing'", async () => {
    const long = await failureOf(`"<" + "x".repeat(100000) + ">"`);
    expect(long.message).toMatch(/it printed 100002 bytes, starting "<x{159}" and ending "x{79}>"/);
    expect(long.message.length).toBeLessThan(500);
    const empty = await failureOf(`""`);
    expect(empty.message).toContain("(it printed nothing on stdout)");
  });

  it("cannot put a terminal escape, a bidi control or a newline into the message", async () => {
    const err = await failureOf(`"\\u001b[2J\\u202eevil\\r\\nforged log line"`);
    expect(err.message).toContain(`"\\u001b[2J\\u202eevil\\r\\nforged log line"`);
    expect(err.message).not.toMatch(/[^\x20-\x7e]/);
  });
});

describe("describeAgentStdout", () => {
  it("counts bytes, not characters, and escapes what is not printable ASCII", () => {
    expect(describeAgentStdout("é")).toBe(`it printed 2 bytes: "\\u00e9"`);
  });
});
