import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeLooseObject } from "../src/plumbing/git-objects.js";

// After a power loss, writes that were not fsynced (git effects with durable: false) can leave a
// loose object's file in place but empty or torn. git takes an object file that exists for the
// object, so a commit that reuses it is corrupt; idem's writer rewrites it instead (issue 51).

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function repo(): string {
  const dir = mkdtempSync(join(tmpdir(), "idem-loose-"));
  dirs.push(dir);
  execFileSync("git", ["init", "-q", dir]);
  return dir;
}
const catFile = (dir: string, oid: string) =>
  execFileSync("git", ["-C", dir, "cat-file", "-p", oid], { encoding: "utf8" });

describe("writeLooseObject", () => {
  for (const durable of [false, true]) {
    it(`writes again an object whose file a crash left empty or torn (durable: ${durable})`, async () => {
      const dir = repo();
      const objectsDir = join(dir, ".git", "objects");
      const body = Buffer.from("the content\n");
      const object = { objectsDir, format: "sha1" as const, type: "blob", body, durable };
      const oid = await writeLooseObject(object);
      const file = join(objectsDir, oid.slice(0, 2), oid.slice(2));
      expect(catFile(dir, oid)).toBe("the content\n");

      truncateSync(file, 0);
      expect(() => catFile(dir, oid)).toThrow();
      expect(await writeLooseObject(object)).toBe(oid);
      expect(catFile(dir, oid)).toBe("the content\n");

      // Torn: the first bytes of another deflate stream under its name.
      rmSync(file, { force: true });
      writeFileSync(file, Buffer.from([0x78, 0x01, 0x2b, 0x49]));
      await writeLooseObject(object);
      expect(catFile(dir, oid)).toBe("the content\n");
      const whole = statSync(file).mtimeMs;
      // Whole already: left alone.
      await writeLooseObject(object);
      expect(statSync(file).mtimeMs).toBe(whole);
      execFileSync("git", ["-C", dir, "fsck", "--no-dangling"]);
    });
  }
});
