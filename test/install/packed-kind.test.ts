// A kind of one's own with the packed CLI installed globally into an empty prefix (README's
// option 3), from an empty folder, following docs/effect-kinds.md's first steps word for word
// (its `<!-- idem:run -->` block): the kind written, registered, listed, tested in process and
// drilled, importing @idem/kit and zod that nothing installs beside it (the CLI provides its own).
// Then a kind module in another empty folder, importing the kit by name, drilled by its path.
// better-sqlite3 installs its prebuilt binary, as for a user online (packed-cli.test.ts compiles
// it, as offline); the steps take 30-60 s.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InstalledCli, installCli, MINUTE, REPO, run } from "./installed.js";
import { followReadme } from "./readme-steps.js";

let root: string;
let cli: InstalledCli;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "idem-install-kind-"));
  cli = await installCli(root, { prebuilt: true });
  process.stderr.write(
    `packed-kind: npm pack ${cli.seconds.pack} s, npm install -g ${cli.seconds.install} s\n`,
  );
}, 12 * MINUTE);
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("a kind of one's own with the packed CLI installed globally", () => {
  it(
    "follows docs/effect-kinds.md from an empty folder: written, registered, tested in process and drilled",
    async () => {
      const dir = join(root, "author");
      mkdirSync(dir);
      const doc = readFileSync(join(REPO, "docs/effect-kinds.md"), "utf8");
      const { steps } = await followReadme(doc, { dir, env: cli.env });
      expect(steps).toBeGreaterThan(0);
      const listed = await run(cli.bin, ["kinds", "--json"], {
        cwd: dir,
        env: cli.env,
        timeoutMs: MINUTE,
      });
      const kinds = JSON.parse(listed.stdout).kinds as { name: string; module: string }[];
      expect(kinds.find((k) => k.name === "acme.note")?.module).toBe(
        join(dir, "kinds/acme-note.mjs"),
      );
    },
    6 * MINUTE,
  );

  it(
    "drills a kind module in an empty folder that imports @idem/kit and zod by name, and refuses a zod 3 one",
    async () => {
      const dir = join(root, "bare");
      mkdirSync(dir);
      writeFileSync(
        join(dir, "count.mjs"),
        [
          'import { absent, defineEffectKind, kindJsonSchema, present } from "@idem/kit";',
          'import { z } from "zod";',
          "const seen = new Set();",
          "export default defineEffectKind({",
          '  name: "bare.count", description: "Counts in memory.", guarantee: "uncertain-window",',
          '  spec: z.strictObject({ kind: z.literal("bare.count"), n: z.number().int() }),',
          "  probe: async (_s, c) => (seen.has(c.key) ? present() : absent()),",
          "  apply: async (_s, c) => { seen.add(c.key); return {}; },",
          '  samples: { valid: (i) => ({ kind: "bare.count", n: i }), invalid: [{ spec: { kind: "bare.count", n: 0.5 }, field: "n" }] },',
          "});",
          "export const schema = kindJsonSchema;",
        ].join("\n"),
      );
      const tested = await run(
        cli.bin,
        ["kinds", "test", "./count.mjs", "--in-process", "--json"],
        {
          cwd: dir,
          env: cli.env,
          timeoutMs: 2 * MINUTE,
        },
      );
      expect(tested.code, tested.stderr).toBe(0);
      expect(JSON.parse(tested.stdout)).toMatchObject({ kind: "bare.count", ok: true });
      writeFileSync(
        join(dir, "old.mjs"),
        [
          'import kind from "./count.mjs";',
          'const spec = { _def: { typeName: "ZodObject" }, safeParse: (v) => kind.spec.safeParse(v) };',
          'export default { ...kind, name: "bare.old", spec };',
        ].join("\n"),
      );
      const old = await run(cli.bin, ["kinds", "test", "./old.mjs"], {
        cwd: dir,
        env: cli.env,
        timeoutMs: MINUTE,
      });
      expect(old.code).toBe(2);
      expect(old.stderr).toMatch(/zod 3 schema: idem reads kinds built with zod 4/);
    },
    4 * MINUTE,
  );
});
