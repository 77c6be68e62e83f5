// The packed CLI's lazy imports give what the clone's give. Every module the CLI imports on first
// use (a command's action, the PostgreSQL store, the NATS transport and JetStream client) is a
// dynamic import(); in the bundle each becomes a chunk. A chunk made from a bundled CommonJS package
// (the @nats-io client) once exported only `default`, where Node gives the clone every named export:
// `connect` was undefined, and every NATS command of the installed CLI failed. Here the bundle is
// made (scripts/bundle.mjs, as `npm pack` runs it, into a folder of this test inside apps/cli so its
// third-party imports resolve from the workspace) and every chunk it imports dynamically is loaded
// by a plain Node process. Seconds; the install itself is test/install/packed-cli.test.ts.
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = resolve(dirname(fileURLToPath(import.meta.url)), "../../apps/cli");

const node = (args: string[], cwd: string) =>
  new Promise<string>((done, fail) => {
    execFile(
      process.execPath,
      args,
      { cwd, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? fail(new Error(stderr || error.message)) : done(stdout)),
    );
  });

let pack: string;
beforeAll(async () => {
  pack = mkdtempSync(join(CLI, "dist", "imports-"));
  await node([join(CLI, "scripts/bundle.mjs"), pack], CLI);
}, 180_000);
afterAll(() => {
  rmSync(pack, { recursive: true, force: true });
});

/** Every chunk that some chunk of the bundle imports with import("./…"). */
function dynamicallyImported(): string[] {
  const targets = new Set<string>();
  for (const f of readdirSync(pack).filter((n) => n.endsWith(".js"))) {
    const text = readFileSync(join(pack, f), "utf8");
    for (const m of text.matchAll(/\bimport\(\s*"\.\/([^"]+\.js)"\s*\)/g))
      targets.add(m[1] as string);
  }
  return [...targets].sort();
}

/** The export names of each chunk, as a Node process that imports it sees them. */
async function exportsOf(chunks: string[]): Promise<Record<string, string[]>> {
  const script = `
    const out = {};
    for (const c of ${JSON.stringify(chunks)}) out[c] = Object.keys(await import("./" + c)).sort();
    process.stdout.write(JSON.stringify(out));
  `;
  return JSON.parse(await node(["--input-type=module", "-e", script], pack)) as Record<
    string,
    string[]
  >;
}

/** The export names Node gives the clone for a package imported from packages/nats. */
async function cloneExports(pkg: string): Promise<string[]> {
  const script = `process.stdout.write(JSON.stringify(Object.keys(await import(${JSON.stringify(pkg)})).sort()))`;
  return JSON.parse(
    await node(["--input-type=module", "-e", script], resolve(CLI, "../../packages/nats")),
  ) as string[];
}

describe("the packed CLI's lazily imported chunks", () => {
  it("each export names, not only a default: what the clone's import() gives", async () => {
    const chunks = dynamicallyImported();
    // The actions of every command, the PostgreSQL store, @idem/nats, the two @nats-io modules.
    expect(chunks.length).toBeGreaterThan(20);
    const names = await exportsOf(chunks);
    const defaultOnly = chunks.filter((c) => (names[c] ?? []).every((n) => n === "default"));
    expect(defaultOnly).toEqual([]);
  });

  it("give the NATS transport and the JetStream client with every export Node gives the clone", async () => {
    const chunks = dynamicallyImported();
    const names = await exportsOf(chunks);
    for (const [pkg, prefix] of [
      ["@nats-io/transport-node", "transport-node-"],
      ["@nats-io/jetstream", "jetstream-"],
    ] as const) {
      const chunk = chunks.filter((c) => c.startsWith(prefix));
      expect(chunk, `the chunk of ${pkg}`).toHaveLength(1);
      const clone = await cloneExports(pkg);
      expect(clone).toEqual(
        expect.arrayContaining(pkg.endsWith("node") ? ["connect"] : ["jetstream"]),
      );
      expect(names[chunk[0] as string]).toEqual(clone);
    }
  });
});
