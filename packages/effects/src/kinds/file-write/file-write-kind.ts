import { posix } from "node:path";
import { aliasOf, defineEffectKind, type ProbeResult } from "@idem/kit";
import { checkFullPath, checkingField, checkRelativePath } from "../../sandbox.js";
import { type FileRoots, FileRootsSchema, resolveFileRoots } from "./file-roots.js";
import { fileWriteDoctor } from "./file-write-doctor.js";
import {
  createFileWriter,
  type FileWriter,
  fileWriteBytes,
  fileWriteLocks,
} from "./file-write-effect.js";
import { type FileWriteSpec, FileWriteSpecSchema } from "./spec.js";

/**
 * `file.write`: exactly these bytes at a path under a configured root, written atomically. Present
 * when the file holds exactly the bytes; a later recorded write to the same root and path
 * supersedes an earlier one, which is then skipped, never rolled back. Its options are the
 * config's `roots` section.
 */
export const fileWriteKind = defineEffectKind<FileWriteSpec, FileRoots, FileWriter>({
  name: "file.write",
  description:
    "Writes the whole content of one file (utf8 or base64) at a path under a configured root, atomically; a later recorded write to the same path supersedes it.",
  guarantee: "exactly-once-in-effect",
  spec: FileWriteSpecSchema,
  configSection: "roots",
  configSectionOptional: true,
  options: FileRootsSchema,
  resolveOptions: resolveFileRoots,
  doctor: fileWriteDoctor,
  locks: (ctx) => fileWriteLocks(ctx.options),
  check(spec, ctx) {
    const root = aliasOf(ctx.options, spec.root);
    if (!root) ctx.issue("root", `unknown root alias "${spec.root}"`);
    const max = ctx.limits.maxFileBytes;
    const bytes =
      spec.encoding === "base64"
        ? decodedBase64Length(spec.content)
        : Buffer.byteLength(spec.content, "utf8");
    if (bytes === undefined) ctx.issue("content", "is not valid base64");
    else if (bytes > max) ctx.issue("content", `is larger than limits.maxFileBytes (${max})`);
    if (!root || bytes === undefined || bytes > max) return;
    // The write's own path checks; base64 and size above, without a decode.
    checkingField("path", () => {
      checkRelativePath("path", spec.path);
      checkFullPath("path", root.path, spec.path);
    });
  },
  targets: (spec) => [`root:${spec.root}`],
  aliases: (spec) => [{ type: "root", name: spec.root }],
  knownAliases: (ctx) => Object.keys(ctx.options).map((name) => ({ type: "root", name })),
  supersedeKey: (spec) => `${spec.root}\0${posix.normalize(spec.path.replace(/\\/g, "/"))}`,
  approval: { facts: ["path"], factsOf: (spec) => ({ path: spec.path }) },
  describe: (spec) => `${spec.root}:${spec.path}`,
  probeable: () => true,
  targetDedup: () => true,
  open: (ctx) => createFileWriter(ctx.options, ctx.limits.maxFileBytes),
  probe: (spec, call) => call.resource.probe(spec, call.key),
  apply: (spec, call) => call.resource.apply(spec, call.key, call.probed),
  async probeBatch(items, call) {
    // A simulation probes each write as if the earlier absent ones to the same path had landed.
    const out = new Map<string, ProbeResult>();
    const written = new Map<string, Buffer>();
    const max = call.limits.maxFileBytes;
    for (const { spec, key, since } of items) {
      try {
        if (!call.simulate) {
          out.set(key, await call.probeOne(spec, key, since));
          continue;
        }
        const bytes = fileWriteBytes(spec, max);
        const id = `${spec.root}\n${spec.path}`;
        const sim = written.get(id);
        const r =
          sim === undefined
            ? await call.probeOne(spec, key, since)
            : sim.equals(bytes)
              ? { status: "present" as const, detail: { bytes: bytes.length, simulated: true } }
              : { status: "absent" as const, detail: { simulated: true } };
        if (r.status === "absent") written.set(id, bytes);
        out.set(key, r);
      } catch (e) {
        if (!isValidation(e)) throw e;
        out.set(key, { status: "conflict", reason: `${e.code}: ${e.message}` });
      }
    }
    return out;
  },
  samples: {
    valid: (i, ctx) => ({
      kind: "file.write" as const,
      root: Object.keys(ctx.options as FileRoots)[0] ?? "root",
      path: `idem-drill/${i}.txt`,
      content: `drill ${i}\n`,
    }),
    invalid: [
      { spec: { kind: "file.write", root: "r", path: "/etc/passwd", content: "" }, field: "path" },
      {
        spec: { kind: "file.write", root: "r", path: "a", content: "!", encoding: "base64" },
        field: "content",
      },
    ],
  },
});

function isValidation(e: unknown): e is { code: string; message: string } {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { name?: unknown }).name === "IdemError" &&
    (e as { class?: unknown }).class === "validation"
  );
}

function decodedBase64Length(s: string): number | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) return undefined;
  return Buffer.from(s, "base64").length;
}
