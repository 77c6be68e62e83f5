// What `idem kinds new <name>` writes: a kind that keeps a note per effect as a file in a folder
// its options name (a target the drill can act on anywhere), a test of it in process, run by
// `node --test` where @idem/kit is installed, and the config entry that registers it.

/** The kind module: `export default defineEffectKind({ ... })`, exactly once in effect. */
export function kindModuleText(name: string): string {
  const ns = name.split(".")[0];
  return `// ${name}: keeps a note per effect as a JSON file in the folder its options name. Written by
// \`idem kinds new\`: change the target, keep the shape (docs/effect-kinds.md walks through it).
// The effect key is in the file's name, so the probe finds an applied note after any crash; the
// file is written whole (a temporary file renamed), so a crash leaves either nothing or the note.
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { absent, conflict, defineEffectKind, fail, present } from "@idem/kit";
import { z } from "zod";

const NAME = ${JSON.stringify(name)};
const Options = z.strictObject({ dir: z.string().min(1) });
const Spec = z.strictObject({
  kind: z.literal(NAME),
  title: z.string().min(1).max(200),
  text: z.string().max(10_000).default(""),
});

const fileOf = (dir, key) => join(dir, \`\${encodeURIComponent(key)}.json\`);
const keyOf = (file) => decodeURIComponent(file.slice(0, -".json".length));

async function probe(spec, { options, key }) {
  let note;
  try {
    note = JSON.parse(await readFile(fileOf(options.dir, key), "utf8"));
  } catch (e) {
    if (e.code === "ENOENT") return absent();
    throw fail.transient(\`cannot read the note of \${key}: \${e.code ?? e.name}\`, { cause: e });
  }
  if (note.title !== spec.title) return conflict(\`the note of \${key} has another title\`);
  return present({ file: fileOf(options.dir, key) });
}

export default defineEffectKind({
  name: NAME,
  description: "Keeps a note (a title and a text) as a JSON file in the configured folder.",
  guarantee: "exactly-once-in-effect",
  spec: Spec,
  options: Options,
  resolveOptions: (options, source) =>
    isAbsolute(options.dir) ? options : { ...options, dir: resolve(source.dir, options.dir) },
  describe: (spec) => JSON.stringify(spec.title),
  open: (ctx) => ({ fault: (point) => ctx.fault(point) }),
  probe,
  async apply(spec, c) {
    const probed = c.probed ?? (await probe(spec, c));
    if (probed.status === "present") return probed.detail;
    if (probed.status === "conflict") throw fail.conflict(probed.reason);
    const file = fileOf(c.options.dir, c.key);
    try {
      await mkdir(c.options.dir, { recursive: true });
      await writeFile(\`\${file}.tmp\`, JSON.stringify({ key: c.key, title: spec.title, text: spec.text }));
      c.resource.fault(${JSON.stringify(`${ns}.before-rename`)});
      await rename(\`\${file}.tmp\`, file);
    } catch (e) {
      throw fail.transient(\`cannot write the note of \${c.key}: \${e.code ?? e.name}\`, { cause: e });
    }
    return { file };
  },
  scan: {
    target: (_spec, ctx) => ctx.options.dir,
    async keys(_spec, { options }) {
      const files = await readdir(options.dir).catch((e) => (e.code === "ENOENT" ? [] : Promise.reject(e)));
      const keys = new Map();
      for (const f of files.filter((f) => f.endsWith(".json"))) keys.set(keyOf(f), [f]);
      return keys;
    },
  },
  samples: {
    valid: (i) => ({ kind: NAME, title: \`note \${i}\`, text: "written by the drill" }),
    invalid: [
      { spec: { kind: NAME, title: "" }, field: "title" },
      { spec: { kind: NAME, title: "t", text: 7 }, field: "text" },
    ],
  },
  faultPoints: [${JSON.stringify(`${ns}.before-rename`)}],
});
`;
}

/** The kind's test in process (node:test; any framework can call assertKind the same way). */
export function kindTestText(name: string, moduleFile: string): string {
  return `// ${name} in process: its samples, probe and apply, and a throw at every fault point and
// around every request, each followed by idem's retry. \`node --test\` where @idem/kit is
// installed; \`idem kinds test ${name} --in-process\` runs the same with idem's own kit.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { assertKind } from "@idem/kit/test";
import kind from "./${moduleFile}";

test(${JSON.stringify(`${name} keeps its contract`)}, async () => {
  await assertKind(kind, { options: { dir: mkdtempSync(join(tmpdir(), "kind-test-")) } });
});
`;
}
