import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { FileWriteSpec } from "@idem/effects";
import { isIdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { BUILT_IN_KINDS } from "../src/kinds/index.js";
import { kindRegistryOf } from "../src/registry/kind-registry.js";
import { addRoot, type Sandbox, sandbox } from "./helpers.js";

const spec = (path: string, content: string, encoding?: "utf8" | "base64"): FileWriteSpec => ({
  kind: "file.write",
  root: "outbox",
  path,
  content,
  ...(encoding ? { encoding } : {}),
});

describe("file.write", () => {
  let sb: Sandbox;
  let fx: Effects;
  let root: string;
  afterEach(async () => {
    await fx?.close();
    sb?.cleanup();
  });
  function setup() {
    sb = sandbox();
    root = addRoot(sb);
    fx = createEffects(sb.config);
  }

  it("writes atomically, then probes present; a different content is absent", async () => {
    setup();
    const s = spec("reports/2024/a.json", '{"a":1}\n');
    expect((await fx.probe(s, "j/0")).status).toBe("absent");
    await fx.apply(s, "j/0");
    expect(readFileSync(join(root, "reports/2024/a.json"), "utf8")).toBe('{"a":1}\n');
    expect((await fx.probe(s, "j/0")).status).toBe("present");
    expect((await fx.probe(spec("reports/2024/a.json", "other"), "j/1")).status).toBe("absent");
    expect(readdirSync(join(root, "reports/2024"))).toEqual(["a.json"]);
  });

  it("writes only over the version it probed: a stale writer cannot roll back a later write", async () => {
    setup();
    const older = spec("state.txt", "v1");
    const newer = spec("state.txt", "v2");
    const staleProbe = await fx.probe(older, "a/0");
    expect(staleProbe.status).toBe("absent");
    await fx.apply(newer, "b/0", { probed: await fx.probe(newer, "b/0") }); // a later run writes first
    const err = await fx.apply(older, "a/0", { probed: staleProbe }).catch((e: unknown) => e);
    expect(isIdemError(err, "TARGET_MOVED")).toBe(true);
    expect(readFileSync(join(root, "state.txt"), "utf8")).toBe("v2");
    // Probed afresh, the same write goes through (the interpreter re-probes on TARGET_MOVED).
    await fx.apply(older, "a/0", { probed: await fx.probe(older, "a/0") });
    expect(readFileSync(join(root, "state.txt"), "utf8")).toBe("v1");
  });

  it("writes base64 bytes exactly and applying twice is harmless", async () => {
    setup();
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10]);
    const s = spec("bin/blob", bytes.toString("base64"), "base64");
    await fx.apply(s, "j/2");
    await fx.apply(s, "j/2");
    expect(readFileSync(join(root, "bin/blob")).equals(bytes)).toBe(true);
    expect((await fx.probe(s, "j/2")).status).toBe("present");
  });

  it("follows a symlink that stays inside the root, refuses one that leaves it", async () => {
    setup();
    mkdirSync(join(root, "real"));
    symlinkSync(join(root, "real"), join(root, "inside"));
    await fx.apply(spec("inside/x.txt", "x"), "j/3");
    expect(readFileSync(join(root, "real/x.txt"), "utf8")).toBe("x");
    const outside = join(sb.dir, "outside");
    mkdirSync(outside);
    symlinkSync(outside, join(root, "escape"));
    await expect(fx.apply(spec("escape/x.txt", "x"), "j/4")).rejects.toSatisfy((e) =>
      isIdemError(e, "SANDBOX_VIOLATION"),
    );
    expect(readdirSync(outside)).toEqual([]);
    writeFileSync(join(outside, "target"), "keep");
    symlinkSync(join(outside, "target"), join(root, "link"));
    await expect(fx.apply(spec("link", "x"), "j/5")).rejects.toSatisfy((e) =>
      isIdemError(e, "SANDBOX_VIOLATION"),
    );
    expect(readFileSync(join(outside, "target"), "utf8")).toBe("keep");
  });
});

describe("file.write's locks", () => {
  it("names each root's lock file, the one its writer takes (so status and doctor name a frozen holder)", async () => {
    const sb = sandbox();
    addRoot(sb);
    const fx = createEffects(sb.config);
    try {
      const registry = kindRegistryOf(sb.config, BUILT_IN_KINDS);
      const kind = registry.get("file.write");
      const locks = (await kind?.locks?.(registry.context("file.write"))) ?? [];
      expect(locks.map((l) => [l.key, l.what])).toEqual([["roots.outbox", "root outbox"]]);
      await fx.apply(spec("a.txt", "a"), "j/0");
      const holder = JSON.parse(readFileSync(locks[0]?.file as string, "utf8")) as { pid: number };
      expect(holder.pid).toBe(process.pid);
    } finally {
      await fx.close();
      sb.cleanup();
    }
  });
});
