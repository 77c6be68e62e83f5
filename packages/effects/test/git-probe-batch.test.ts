import { mkdirSync, rmSync } from "node:fs";
import type { GitCommitSpec } from "@idem/effects";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, git, type Sandbox, sandbox } from "./helpers.js";

const commit = (path: string, branch?: string): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: `write ${path}`,
  files: [{ path, content: `${path}\n` }],
  ...(branch === undefined ? {} : { branch }),
});

/** The code of the error `p` rejects with (it must reject). */
async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isIdemError(e)) return e.code;
    throw e;
  }
  throw new Error("it succeeded");
}

describe("probeBatch of git effects", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it("answers a branch's keys present or absent from one scan, after a restore lost the newest", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    fx = createEffects(sb.config, { clock: clock() });
    for (let i = 0; i < 4; i++) await fx.apply(commit(`f${i}.txt`), `job-${i}/0`);
    git(repo, "reset", "-q", "--hard", "HEAD~1"); // below idem's watermark: the refs are not trusted
    await fx.close();
    fx = createEffects(sb.config, { clock: clock() });
    const head = git(repo, "rev-parse", "main");
    const items = [0, 1, 2, 3].map((i) => ({ spec: commit(`f${i}.txt`), key: `job-${i}/0` }));
    for (const simulate of [false, true]) {
      const out = await fx.probeBatch(items, { simulate });
      expect(out.get("job-3/0"), `simulate ${simulate}`).toEqual({
        status: "absent",
        detail: { base: head },
      });
      for (const i of [0, 1, 2]) {
        const sha = git(repo, "log", "--format=%H", `--grep=^Idem-Effect: job-${i}/0$`, "main");
        expect(out.get(`job-${i}/0`)).toEqual({ status: "present", detail: { commit: sha } });
      }
    }
  });

  it("refuses a branch the config does not allow before it reads the repository", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    fx = createEffects(sb.config, { clock: clock() });
    const refused = [{ spec: commit("a.txt", "other"), key: "job-1/0" }];
    expect(await codeOf(fx.probeBatch(refused))).toBe("SANDBOX_VIOLATION");
    rmSync(repo, { recursive: true, force: true });
    mkdirSync(repo); // a folder that is no repository any more
    expect(await codeOf(fx.probeBatch(refused))).toBe("SANDBOX_VIOLATION");
    const allowed = [{ spec: commit("a.txt"), key: "job-1/0" }];
    expect(await codeOf(fx.probeBatch(allowed))).toBe("TARGET_MISSING");
  });
});
