import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tempDir } from "@idem/testing";
import { describe, expect, it } from "vitest";
import {
  drillConfigOf,
  kindsOf,
  listKinds,
  loadKindModule,
  loadKinds,
  parseIdemConfig,
  verdictOf,
} from "../src/index.js";

const FIXTURES = fileURLToPath(new URL("../../../test/fixtures/kinds/", import.meta.url));
const ITEM = join(FIXTURES, "item-kind.mjs");

describe("drillConfigOf", () => {
  it("keeps every target of the base config, paths absolute, and gives the drill its own journal", async () => {
    await using base = await tempDir("idem-drill-base-");
    await using drill = await tempDir("idem-drill-ws-");
    const parsed = parseIdemConfig(
      {
        journal: { url: "postgres://u@db/idem" },
        repos: {
          site: { path: "repos/site", branch: "main" },
          remote: { url: "https://git.example.com/app.git", branch: "main" },
        },
        roots: { out: { path: "out" } },
        http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9/" } } },
        agents: { writer: { command: ["node", "./agent.mjs"] } },
        alerts: { webhook: "https://alerts.example.com/x" },
        interpreter: { leaseMs: 60_000, pipeline: 4 },
      },
      { dir: base.path, file: join(base.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const raw = drillConfigOf(
      parsed.config,
      { name: "fixture.item", module: ITEM, options: { dir: "items" } },
      drill.path,
    );
    const again = parseIdemConfig(raw, {
      dir: drill.path,
      file: join(drill.path, "idem.config.json"),
    });
    if (!again.ok) throw new Error(JSON.stringify(again.issues));
    const c = again.config;
    // Each kind's options read from the drill's folder are those of the base config.
    const [before, after] = [kindsOf(parsed.config), await loadKinds(c)];
    for (const kind of ["git.commit", "file.write", "http.request"])
      expect(after.options(kind), kind).toEqual(before.options(kind));
    expect(after.options("git.commit")).toMatchObject({
      site: { path: join(base.path, "repos/site") },
      remote: { cacheDir: join(base.path, ".idem/mirrors/remote.git") },
    });
    expect(c.journal).toMatchObject({ path: join(drill.path, "journal.db"), url: null });
    expect(c.agents).toEqual({});
    expect(c.alerts.webhook).toBeNull();
    expect(c.interpreter).toMatchObject({ pipeline: 4, maxLeaseExpiries: 1000 });
    expect(c.interpreter.leaseMs).toBeLessThan(60_000);
    expect(c.kinds).toEqual({ "fixture.item": { module: ITEM, options: { dir: "items" } } });
  });
});

describe("listKinds", () => {
  it("lists idem's own kinds and the config's, each described by itself", async () => {
    await using dir = await tempDir("idem-kinds-");
    const parsed = parseIdemConfig(
      { kinds: { "fixture.item": { module: ITEM, options: { dir: "items" } } } },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await loadKinds(parsed.config);
    const listing = listKinds(parsed.config, { withSchemas: true });
    const item = listing.kinds.find((k) => k.name === "fixture.item");
    expect(item).toMatchObject({
      builtIn: false,
      module: ITEM,
      aliases: [],
      probe: "always",
      scan: true,
      batchProbe: false,
      samples: true,
      faultPoints: ["fixture.after-create"],
      schema: { type: "object", required: ["kind", "text"] },
    });
    expect(listing.kinds.filter((k) => k.builtIn).length).toBeGreaterThan(0);
    expect(listing.unavailable.map((u) => u.section)).toContain("github");
  });
});

describe("loadKindModule", () => {
  it("answers the kinds a module exports, and refuses one that exports none naming the module", async () => {
    await using dir = await tempDir("idem-kind-module-");
    writeFileSync(join(dir.path, "none.mjs"), "export const x = 1;\n");
    const loaded = await loadKindModule("./item-kind.mjs", FIXTURES);
    expect(loaded.module).toBe(ITEM);
    expect(loaded.kinds.map((k) => k.name)).toEqual(["fixture.item"]);
    await expect(loadKindModule("./none.mjs", dir.path)).rejects.toMatchObject({
      code: "INVALID_INPUT",
      details: { field: "module" },
    });
    await expect(loadKindModule("./missing.mjs", dir.path)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });
});

describe("verdictOf", () => {
  it("is broken over uncertain over exactly once", () => {
    const f = (severity: "broken" | "uncertain" | "note") => ({
      code: "duplicated-at-target" as const,
      severity,
      message: "",
    });
    expect(verdictOf([])).toBe("exactly-once-in-effect");
    expect(verdictOf([f("note")])).toBe("exactly-once-in-effect");
    expect(verdictOf([f("note"), f("uncertain")])).toBe("can-end-uncertain");
    expect(verdictOf([f("uncertain"), f("broken")])).toBe("broken");
  });
});

describe("a kind built with zod 3", () => {
  const ZOD3 = join(FIXTURES, "zod3-kind.mjs");

  it("is refused by the config's loader, naming the kind and zod 4", async () => {
    await using dir = await tempDir("idem-kinds-zod3-");
    const parsed = parseIdemConfig(
      { kinds: { "fixture.zod3": { module: ZOD3, options: { dir: "items" } } } },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const refused = loadKinds(parsed.config);
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { key: "kinds.fixture.zod3" },
    });
    await expect(refused).rejects.toThrow(/zod 3 schema: idem reads kinds built with zod 4/);
  });

  it("is refused by the drill's loader, naming zod 4", async () => {
    await expect(loadKindModule(ZOD3, FIXTURES)).rejects.toThrow(/spec is a zod 3 schema.*zod 4/);
  });
});

describe("a config kind's bad options", () => {
  it("are refused all at once, each named by its key", async () => {
    await using dir = await tempDir("idem-kinds-options-");
    const parsed = parseIdemConfig(
      { kinds: { "fixture.item": { module: ITEM, options: { dir: 5, extra: true } } } },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const refused = loadKinds(parsed.config);
    await expect(refused).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { key: "kinds.fixture.item.options.dir" },
    });
    await expect(refused).rejects.toThrow(
      /kinds\.fixture\.item\.options\.dir: .*; kinds\.fixture\.item\.options: /,
    );
  });
});

describe("a module with a plain-object copy of its kind beside the default export", () => {
  it("is one kind to the drill's loader, as to the config's", async () => {
    await using dir = await tempDir("idem-kind-copy-");
    writeFileSync(
      join(dir.path, "copy.mjs"),
      `import kind from ${JSON.stringify(ITEM)};\nexport default kind;\nexport const itemKind = { ...kind };\nexport const settings = { dir: "items" };\n`,
    );
    const loaded = await loadKindModule("./copy.mjs", dir.path);
    expect(loaded.kinds.map((k) => k.name)).toEqual(["fixture.item"]);
    const parsed = parseIdemConfig(
      { kinds: { "fixture.item": { module: "./copy.mjs", options: { dir: "items" } } } },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await loadKinds(parsed.config);
    expect(kindsOf(parsed.config).get("fixture.item")).toBe(loaded.kinds[0]);
  });
});

describe("listKinds and a declared guarantee", () => {
  it("states uncertain-window for a kind that declares exactly once in effect with a probe that cannot tell", async () => {
    await using dir = await tempDir("idem-kinds-overclaiming-");
    const parsed = parseIdemConfig(
      {
        kinds: {
          "fixture.overclaiming": {
            module: join(FIXTURES, "overclaiming-kind.mjs"),
            options: { dir: "items" },
          },
        },
      },
      { dir: dir.path, file: join(dir.path, "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await loadKinds(parsed.config);
    const listed = listKinds(parsed.config).kinds.find((k) => k.name === "fixture.overclaiming");
    expect(listed).toMatchObject({
      guarantee: "uncertain-window",
      declared: "exactly-once-in-effect",
    });
  });
});
