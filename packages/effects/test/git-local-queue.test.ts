import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { GitCommitSpec } from "@idem/effects";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, commitsWithKey, git, type Sandbox, sandbox } from "./helpers.js";

const spec = (path: string): GitCommitSpec => ({
  kind: "git.commit",
  repo: "site",
  message: `agent: ${path}`,
  files: [{ path, content: `${path}\n` }],
});

describe("git.commit on a local branch: applies queued at once", () => {
  let sb: Sandbox;
  let fx: Effects;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });

  it("says a local branch queues its applies, and lands effects probed at one head and applied at once, each once, in order", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    fx = createEffects(sb.config, { clock: clock() });
    const head0 = git(repo, "rev-parse", "main");
    expect(fx.queuedApplies(spec("a.txt"))).toBe(true);
    const keys = Array.from({ length: 12 }, (_, i) => `j${i}/0`);
    // Every probe before any apply: each answers absent at head0, as the pipeline's early probes.
    const probes = await Promise.all(keys.map((k) => fx.probe(spec(`f/${k}.txt`), k)));
    for (const p of probes) expect(p).toEqual({ status: "absent", detail: { base: head0 } });
    const details = await Promise.all(
      keys.map((k, i) => fx.apply(spec(`f/${k}.txt`), k, { probed: probes[i] })),
    );
    const commits = git(repo, "rev-list", "--reverse", `${head0}..main`).split("\n");
    expect(details).toEqual(
      commits.map((c, i) => ({ commit: c, base: i === 0 ? head0 : commits[i - 1] })),
    );
    expect(git(repo, "log", "--reverse", "--format=%s", `${head0}..main`).split("\n")).toEqual(
      keys.map((k) => `agent: f/${k}.txt`),
    );
    for (const [i, k] of keys.entries()) {
      expect(commitsWithKey(repo, k)).toEqual([commits[i]]);
      expect(await fx.probe(spec(`f/${k}.txt`), k)).toEqual({
        status: "present",
        detail: { commit: commits[i] },
      });
      expect(readFileSync(join(repo, `f/${k}.txt`), "utf8")).toBe(`f/${k}.txt\n`);
    }
    expect(git(repo, "status", "--porcelain")).toBe("");
    // Fewer ref transactions than commits: the applies waiting at once went out together.
    const moves = readFileSync(join(repo, ".git/logs/refs/heads/main"), "utf8").trim().split("\n");
    expect(moves.length - 1).toBeLessThan(keys.length);
  });
});
