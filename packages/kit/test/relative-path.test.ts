import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  gitAttributesIssue,
  isDotGitModulesSegment,
  isDotGitSegment,
  unsafeGitPath,
  unsafeRelativePath,
} from "../src/relative-path.js";

let repo: string;
let blob: string;

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "idem-git-path-"));
  execFileSync("git", ["init", "-q", repo]);
  blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { cwd: repo, input: "x" })
    .toString()
    .trim();
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

/**
 * git's own verdict (verify_path in read-cache.c) with NTFS and HFS+ protection on, as a clone on
 * Windows or macOS applies it. As a symlink (120000), so that the `.gitmodules` forms count too.
 */
function gitRefuses(path: string): boolean {
  // A fresh index each time: a path added before could clash with this one as file and folder.
  rmSync(join(repo, "scratch-index"), { force: true });
  const r = spawnSync(
    "git",
    [
      "-c",
      "core.protectNTFS=true",
      "-c",
      "core.protectHFS=true",
      "update-index",
      "--add",
      "--cacheinfo",
      `120000,${blob},${path}`,
    ],
    { cwd: repo, env: { ...process.env, GIT_INDEX_FILE: join(repo, "scratch-index") } },
  );
  return r.status !== 0;
}

/** Our verdict on git's own rules (without idem's extra ones: long segments, attribute folders). */
const oursRefuses = (path: string) =>
  path.split("/").some((s) => s === "" || s === "." || s === ".." || isDotGitSegment(s)) ||
  path.split("/").some(isDotGitModulesSegment);

const REFUSED_BY_GIT = [
  ".git/x",
  ".GIT/x",
  "a/.Git/config",
  ".git /x",
  ".git./x",
  ".git . ./x",
  "git~1/x",
  "GIT~1/x",
  ".git::$INDEX_ALLOCATION/x",
  ".git:stream/x",
  ".git\u200c/x",
  "\u200c.git/x",
  ".g\u200dit/x",
  ".gi\u200et/x",
  ".git\u200f/x",
  ".git\u202a/x",
  ".git\u202e/x",
  ".git\u206a/x",
  ".git\u206f/x",
  ".git\ufeff/x",
  ".gitmodules",
  ".GITMODULES",
  ".gitmodules .",
  "gitmod~1",
  "GITMOD~4",
  "gi7eba~1",
  "gi7eb~12",
  ".gitmodules\u200c",
  "a/.gitmodules",
  "x/../y",
  "./x",
  "a//b",
  "a/",
];

const ACCEPTED_BY_GIT = [
  "a.txt",
  ".gitignore",
  ".github/workflows/ci.yml",
  ".git-blame-ignore-revs",
  ".gitx/y",
  "git/x",
  "git~2/x",
  "gitmod~5",
  "x.git/y",
  ".gitmodulesx",
  ".git\u200b/x",
  "a/.gitattributes",
  "caf\u00e9/na\u00efve.txt",
];

describe("unsafeGitPath", () => {
  it.each(REFUSED_BY_GIT)("refuses %j, as git does", (p) => {
    expect(unsafeGitPath(p)).toBeDefined();
    expect(gitRefuses(p)).toBe(true);
  });

  it.each(ACCEPTED_BY_GIT)("accepts %j, as git does", (p) => {
    expect(unsafeGitPath(p)).toBeUndefined();
    expect(gitRefuses(p)).toBe(false);
  });

  it("agrees with git's verify_path on 400 generated paths made of the pieces that matter", () => {
    const piece = fc.constantFrom(
      ...[".git", ".GiT", "git~1", "GIT~2", ".gitmodules", "gitmod~", "GI7EBA~", "gi7eb~"],
      ...["1", "4", "5", "12", " ", ".", ":", "$D", "~", "x", "m"],
      ...["\u200c", "\u200f", "\u202d", "\u206b", "\ufeff", "\u200b"],
    );
    const segment = fc.array(piece, { minLength: 1, maxLength: 3 }).map((a) => a.join(""));
    const paths = fc.sample(
      fc.array(segment, { minLength: 1, maxLength: 2 }).map((a) => a.join("/")),
      { numRuns: 400, seed: 31 },
    );
    const verdicts = paths.map((p) => ({ p, git: gitRefuses(p), ours: oursRefuses(p) }));
    expect(verdicts.filter((v) => v.git !== v.ours)).toEqual([]);
    // Both answers occur often enough for the agreement to mean something.
    expect(verdicts.filter((v) => v.git).length).toBeGreaterThan(30);
    expect(verdicts.filter((v) => !v.git).length).toBeGreaterThan(30);
  });

  it("refuses a segment longer than 255 bytes, and a folder named .gitattributes", () => {
    expect(unsafeGitPath(`${"a".repeat(256)}/x`)).toMatch(/255 bytes/);
    expect(unsafeGitPath(`${"\u00e9".repeat(128)}`)).toMatch(/255 bytes/);
    expect(unsafeGitPath("a".repeat(255))).toBeUndefined();
    expect(unsafeGitPath(".gitattributes/x")).toBeDefined();
    expect(unsafeGitPath("sub/.GITATTRIBUTES ./x")).toBeDefined();
    expect(unsafeGitPath("sub/.gitattributes")).toBeUndefined();
  });

  it("is part of unsafeRelativePath, so git.commit, git.patch and file.write all refuse these", () => {
    for (const p of REFUSED_BY_GIT) expect(unsafeRelativePath(p), p).toBeDefined();
    for (const p of ACCEPTED_BY_GIT) expect(unsafeRelativePath(p), p).toBeUndefined();
  });
});

describe("gitAttributesIssue", () => {
  it("refuses what git fsck refuses in a .gitattributes file, and nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-gitattributes-"));
    try {
      const fsckFails = (content: Buffer) => {
        rmSync(join(dir, "r"), { recursive: true, force: true });
        mkdirSync(join(dir, "r"));
        const r = join(dir, "r");
        execFileSync("git", ["init", "-q", r]);
        writeFileSync(join(r, ".gitattributes"), content);
        execFileSync("git", ["add", "."], { cwd: r });
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], {
          cwd: r,
        });
        return spawnSync("git", ["fsck"], { cwd: r }).status !== 0;
      };
      for (const content of [
        `*.txt text\n${"a".repeat(2047)}\n`,
        `${"a".repeat(2047)}`,
        `${"a".repeat(2048)}\n`,
        `ok\n${"b".repeat(3000)} text\n`,
        `ok\n\0${"b".repeat(3000)}\n`,
      ]) {
        const bytes = Buffer.from(content);
        expect(gitAttributesIssue(bytes) !== undefined, content.slice(0, 20)).toBe(
          fsckFails(bytes),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
