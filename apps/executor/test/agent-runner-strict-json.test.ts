// Issue 31: a command agent's stdout is parsed strictly, as a submission is: bytes that are not
// UTF-8, a key twice or an integer beyond 2^53 are refused naming the field, instead of being
// recorded as something else than the agent printed.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { silentLogger } from "@idem/runtime";
import { type IdemError, isIdemError, type Job } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { runWithTimeout } from "../src/agent-runner.js";
import { createCommandRunner } from "../src/index.js";
import { testConfig } from "./helpers.js";

const job: Job = { jobId: "j-1", agent: "writer", input: {} };

/** Runs an agent that prints `stdout` (bytes, as given) and answers what the runner answers. */
async function runPrinting(stdout: Buffer): Promise<unknown> {
  await using dir = await tempDir("idem-runner-strict-");
  const out = join(dir.path, "stdout.bin");
  await writeFile(out, stdout);
  const config = testConfig({
    dir: dir.path,
    journalPath: join(dir.path, "j.db"),
    extra: { agents: { writer: { command: ["/bin/cat", out], timeoutMs: 60_000 } } },
  });
  // Awaited here, inside `await using`: the folder holding what the agent prints is removed only
  // once the agent has read it.
  return await runWithTimeout(createCommandRunner(config), job, 60_000, silentLogger()).catch(
    (e: unknown) => e,
  );
}

const issuesOf = (e: unknown) =>
  ((e as IdemError).details?.issues as { path: string }[] | undefined)?.map((i) => i.path);

describe("a command agent's stdout", () => {
  it("is refused, naming the field, when parsing would change it", async () => {
    const dup = await runPrinting(
      Buffer.from('{"jobId":"j-1","agent":"writer","effects":[],"meta":{"a":1,"a":2}}\n'),
    );
    expect(isIdemError(dup, "INVALID_INPUT")).toBe(true);
    expect(issuesOf(dup)).toEqual(["meta.a"]);
    const big = await runPrinting(
      Buffer.from(
        '{"jobId":"j-1","agent":"writer","effects":[],"meta":{"n":[12345678901234567890]}}',
      ),
    );
    expect(issuesOf(big)).toEqual(["meta.n.0"]);
    const bytes = Buffer.from('{"jobId":"j-1","agent":"writer","effects":[],"summary":"a?"}');
    bytes[bytes.indexOf("?")] = 0xfe;
    const bad = await runPrinting(bytes);
    expect(isIdemError(bad, "INVALID_INPUT")).toBe(true);
    expect((bad as Error).message).toMatch(/UTF-8/);
  });

  it("is taken as printed otherwise, surrounding whitespace and a BOM included", async () => {
    const value = { jobId: "j-1", agent: "writer", effects: [], summary: "é" };
    expect(await runPrinting(Buffer.from(`\ufeff\n ${JSON.stringify(value)}\n\n`))).toEqual(value);
  });
});
