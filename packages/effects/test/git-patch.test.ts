import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import {
  addRepo,
  clock,
  commitsWithKey,
  diffOf,
  git,
  gitRaw,
  patchSpec,
  type Sandbox,
  sandbox,
} from "./helpers.js";

const isCode = (code: string) => (e: unknown) => isIdemError(e, code as never);

describe("git.patch", () => {
  let sb: Sandbox;
  let fx: Effects;
  let repo: string;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });
  function setup(opts: Parameters<typeof addRepo>[2] = {}) {
    sb = sandbox();
    repo = addRepo(sb, "site", opts);
    fx = createEffects(sb.config, { clock: clock() });
  }

  it("applies a diff, probes present, and a second apply changes nothing", async () => {
    setup();
    const patch = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "hello\nworld\n"));
    const s = patchSpec(patch);
    const p = await fx.probe(s, "p-1/0");
    expect(p.status).toBe("absent");
    const d = await fx.apply(s, "p-1/0", { probed: p });
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("hello\nworld\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
    expect(await fx.probe(s, "p-1/0")).toEqual({ status: "present", detail: { commit: d.commit } });
    expect(await fx.apply(s, "p-1/0")).toEqual({ commit: d.commit });
    expect(commitsWithKey(repo, "p-1/0")).toHaveLength(1);
  });

  it("finds a patch applied by hand with the reverse-patch probe, and does not apply it again", async () => {
    setup();
    const patch = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "hello\nby hand\n"));
    gitRaw(repo, ["apply", "--index"], patch);
    git(repo, "commit", "-q", "-m", "human applied it");
    const head = git(repo, "rev-parse", "main");
    const p = await fx.probe(patchSpec(patch), "p-2/0");
    expect(p).toEqual({ status: "present", detail: { commit: null, reversed: true, base: head } });
    await fx.apply(patchSpec(patch), "p-2/0");
    expect(git(repo, "rev-parse", "main")).toBe(head);
  });

  it("a conflicting patch is a conflict, never forced", async () => {
    setup();
    const patch = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "hello\nagent\n"));
    writeFileSync(join(repo, "README.md"), "totally different\n");
    git(repo, "commit", "-qam", "human rewrote it");
    const head = git(repo, "rev-parse", "main");
    const p = await fx.probe(patchSpec(patch), "p-3/0");
    expect(p.status).toBe("conflict");
    await expect(fx.apply(patchSpec(patch), "p-3/0", { probed: p })).rejects.toSatisfy(
      isCode("TARGET_CONFLICT"),
    );
    await expect(fx.apply(patchSpec(patch), "p-3/0")).rejects.toSatisfy(isCode("TARGET_CONFLICT"));
    expect(git(repo, "rev-parse", "main")).toBe(head);
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("totally different\n");
  });

  it("a branch that moved between probe and apply makes the apply fail, not commit", async () => {
    setup();
    const patch = diffOf(repo, () => writeFileSync(join(repo, "new.txt"), "n\n"));
    const p = await fx.probe(patchSpec(patch), "p-4/0");
    writeFileSync(join(repo, "other.txt"), "o\n");
    git(repo, "add", "other.txt");
    git(repo, "commit", "-qm", "human");
    const head = git(repo, "rev-parse", "main");
    await expect(fx.apply(patchSpec(patch), "p-4/0", { probed: p })).rejects.toSatisfy(
      isCode("TARGET_MOVED"),
    );
    expect(git(repo, "rev-parse", "main")).toBe(head);
  });

  it("refuses a dirty working tree before moving anything", async () => {
    setup();
    const patch = diffOf(repo, () => writeFileSync(join(repo, "README.md"), "hello\nagent\n"));
    writeFileSync(join(repo, "README.md"), "hello\nhuman, unsaved\n");
    const head = git(repo, "rev-parse", "main");
    await expect(fx.apply(patchSpec(patch), "p-5/0")).rejects.toSatisfy(isCode("DIRTY_WORKTREE"));
    expect(git(repo, "rev-parse", "main")).toBe(head);
    expect(readFileSync(join(repo, "README.md"), "utf8")).toBe("hello\nhuman, unsaved\n");
  });

  it("refuses binary patches with a clear reason", async () => {
    setup();
    const patch = diffOf(
      repo,
      () => writeFileSync(join(repo, "b.bin"), Buffer.from([0, 1, 2, 3])),
      ["--binary"],
    );
    await expect(fx.probe(patchSpec(patch), "p-6/0")).rejects.toSatisfy(isCode("INVALID_INPUT"));
    const plain = diffOf(repo, () => writeFileSync(join(repo, "b.bin"), Buffer.from([0, 1, 2, 3])));
    await expect(fx.apply(patchSpec(plain), "p-6/0")).rejects.toSatisfy(isCode("INVALID_INPUT"));
  });

  it("probeBatch with simulate shows a lost chain of dependent patches as absent, not conflict", async () => {
    setup({ bare: true });
    const work = join(sb.dir, "work");
    git(sb.dir, "clone", "-q", repo, work);
    const p1 = diffOf(work, () => writeFileSync(join(work, "chain.txt"), "1\n"));
    writeFileSync(join(work, "chain.txt"), "1\n");
    git(work, "add", "chain.txt");
    git(work, "commit", "-qm", "step 1");
    const p2 = diffOf(work, () => writeFileSync(join(work, "chain.txt"), "1\n2\n"));
    const items = [
      { spec: patchSpec(p1), key: "c/0" },
      { spec: patchSpec(p2), key: "c/1" },
    ];
    const plain = await fx.probeBatch(items);
    expect(plain.get("c/0")?.status).toBe("absent");
    expect(plain.get("c/1")?.status).toBe("conflict");
    const sim = await fx.probeBatch(items, { simulate: true });
    expect(sim.get("c/0")?.status).toBe("absent");
    expect(sim.get("c/1")?.status).toBe("absent");
    const head = git(repo, "rev-parse", "main");
    await fx.apply(patchSpec(p1), "c/0");
    await fx.apply(patchSpec(p2), "c/1");
    expect(git(repo, "show", "main:chain.txt")).toBe("1\n2");
    expect(git(repo, "rev-parse", "main~2")).toBe(head);
  });
});
