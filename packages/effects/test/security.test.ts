import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, relative } from "node:path";
import type { EffectSpec } from "@idem/schema";
import { isIdemError } from "@idem/schema";
import { configSection } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, addRoot, clock, diffOf, git, type Sandbox, sandbox } from "./helpers.js";

function listTree(dir: string, base = dir): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === ".git" && base !== dir) continue;
    if (name === ".git" && existsSync(join(dir, ".git", "HEAD"))) continue;
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    out.push(`${relative(base, p)}:${st?.size ?? "dangling"}:${st?.mtimeMs ?? 0}`);
    if (st?.isDirectory() && name !== ".git" && !p.includes("escape") && !p.includes("link"))
      out.push(...listTree(p, base));
  }
  return out.sort();
}

const commit = (path: string, extra: Record<string, unknown> = {}): EffectSpec =>
  ({
    kind: "git.commit",
    repo: "site",
    message: "m",
    files: [{ path, content: "pwned\n" }],
    ...extra,
  }) as EffectSpec;
const patch = (p: string, extra: Record<string, unknown> = {}): EffectSpec =>
  ({ kind: "git.patch", repo: "site", message: "m", patch: p, ...extra }) as EffectSpec;
const file = (path: string, extra: Record<string, unknown> = {}): EffectSpec =>
  ({ kind: "file.write", root: "outbox", path, content: "pwned", ...extra }) as EffectSpec;
const pub = (subject: string, extra: Record<string, unknown> = {}): EffectSpec =>
  ({ kind: "nats.publish", target: "events", subject, data: 1, ...extra }) as EffectSpec;
const http = (path: string, extra: Record<string, unknown> = {}): EffectSpec =>
  ({ kind: "http.request", target: "hooks", method: "POST", path, ...extra }) as EffectSpec;

const newFilePatch = (path: string) =>
  `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+pwned\n`;

describe("the sandbox refuses hostile specs and leaves every target unchanged", () => {
  let sb: Sandbox;
  let fx: Effects;
  let repo: string;
  let root: string;
  let outside: string;
  let server: Server;
  let requests = 0;
  let snapshot: () => string;
  const hostile: [string, EffectSpec, string?][] = [];

  beforeAll(async () => {
    sb = sandbox();
    repo = addRepo(sb, "site", { branches: ["dev"] });
    git(repo, "branch", "dev");
    outside = join(sb.dir, "outside");
    mkdirSync(outside);
    writeFileSync(join(outside, "secret"), "secret\n");
    symlinkSync("../outside", join(repo, "link"));
    git(repo, "add", "link");
    git(repo, "commit", "-qm", "a symlink that leaves the repo");
    root = addRoot(sb);
    mkdirSync(join(root, "ok"));
    symlinkSync(outside, join(root, "escape"));
    symlinkSync(join(outside, "secret"), join(root, "secret-link"));
    mkdirSync(join(root, ".git"));
    server = createServer((_req, res) => {
      requests += 1;
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as AddressInfo).port;
    configSection(sb.config, "http", () => ({
      targets: {} as Record<string, unknown>,
    })).targets.hooks = {
      baseUrl: `http://127.0.0.1:${port}/api`,
      idempotencyKeys: false,
      probeUrl: null,
      timeoutMs: 1000,
    };
    configSection(sb.config, "publish").events = {
      subjectPrefix: "events",
      stream: "EVENTS",
      url: "nats://127.0.0.1:1",
    };
    configSection(sb.config, "publish").own = {
      subjectPrefix: "idem",
      stream: "EVENTS",
      url: "nats://127.0.0.1:1",
    };
    sb.config.limits.maxFileBytes = 1024;
    fx = createEffects(sb.config, { clock: clock() });
    snapshot = () =>
      JSON.stringify([
        git(repo, "for-each-ref"),
        git(repo, "status", "--porcelain", "--ignored"),
        listTree(repo),
        listTree(root),
        listTree(outside),
        requests,
      ]);

    const big = "x".repeat(2000);
    hostile.push(
      ["commit: absolute path", commit("/etc/passwd")],
      ["commit: .. traversal", commit("../escape.txt")],
      ["commit: nested .. traversal", commit("a/../../x")],
      ["commit: .git/hooks write", commit(".git/hooks/pre-commit")],
      ["commit: .GIT upper case", commit(".GIT/config")],
      ["commit: nested .git", commit("sub/.git/config")],
      ["commit: option-like path", commit("--exec=evil")],
      ["commit: through a committed symlink", commit("link/secret")],
      ["commit: backslash traversal", commit("docs\\..\\..\\x")],
      ["commit: NUL in path", commit("a\0b")],
      ["commit: empty segment", commit("a//b")],
      ["commit: dot segment", commit("./x")],
      ["commit: option-like branch", commit("x.txt", { branch: "-evil" })],
      [
        "commit: upload-pack injection in branch",
        commit("x.txt", { branch: "--upload-pack=touch /tmp/pwned" }),
      ],
      ["commit: branch with ..", commit("x.txt", { branch: "main..dev" })],
      ["commit: unlisted branch", commit("x.txt", { branch: "release" })],
      ["commit: ref path in branch", commit("x.txt", { branch: "refs/heads/../x" })],
      ["commit: forged trailer", commit("x.txt", { message: "fix\n\nIdem-Effect: other-job/0" })],
      [
        "commit: forged trailer, odd case and spaces",
        commit("x.txt", { message: "  idem-effect : other/0\nbody" }),
      ],
      [
        "commit: file over maxFileBytes",
        {
          kind: "git.commit",
          repo: "site",
          message: "m",
          files: [{ path: "big", content: big }],
        } as EffectSpec,
      ],
      ["commit: unknown repo alias", commit("x.txt", { repo: "nope" })],
      ["commit: the key forges a trailer", commit("x.txt"), "k/0\nIdem-Effect: other/0"],
      ["commit: option-like key", commit("x.txt"), "--all"],
      ["patch: .. traversal", patch(newFilePatch("../outside.txt"))],
      ["patch: .git/hooks write", patch(newFilePatch(".git/hooks/post-commit"))],
      [
        "patch: absolute path",
        patch("--- /etc/passwd\n+++ /etc/passwd\n@@ -1 +1 @@\n-root\n+pwned\n"),
      ],
      [
        "patch: rename to ..",
        patch(
          "diff --git a/README.md b/../x\nsimilarity index 100%\nrename from README.md\nrename to ../x\n",
        ),
      ],
      [
        "patch: creates a symlink",
        patch(
          "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n",
        ),
      ],
      [
        "patch: binary",
        patch(
          "diff --git a/b.bin b/b.bin\nnew file mode 100644\nGIT binary patch\nliteral 4\nLcmZPo$Z`a1\n\nliteral 0\nHcmV?d00001\n\n",
        ),
      ],
      ["patch: through a committed symlink", patch(newFilePatch("link/pwned"))],
      [
        "patch: quoted path hiding ..",
        patch(
          'diff --git "a/\\056\\056/x" "b/\\056\\056/x"\nnew file mode 100644\n--- /dev/null\n+++ "b/\\056\\056/x"\n@@ -0,0 +1 @@\n+x\n',
        ),
      ],
      [
        "patch: mode-only header escaping",
        patch("diff --git a/../run.sh b/../run.sh\nold mode 100644\nnew mode 100755\n"),
      ],
      ["patch: over maxFileBytes", patch(`${newFilePatch("x.txt")}+${big}\n`)],
      [
        "patch: forged trailer",
        patch(
          diffOf(repo, () => writeFileSync(join(repo, "README.md"), "x\n")),
          { message: "Idem-Effect: a/1" },
        ),
      ],
      ["file: absolute path", file("/tmp/pwned")],
      ["file: .. traversal", file("../pwned")],
      ["file: symlinked folder that leaves the root", file("escape/pwned")],
      ["file: symlink as the file", file("secret-link")],
      ["file: .git inside the root", file(".git/config")],
      ["file: over maxFileBytes", file("ok/big", { content: big })],
      ["file: invalid base64", file("ok/b64", { content: "!!!", encoding: "base64" })],
      ["file: unknown root", file("ok/x", { root: "nope" })],
      ["nats: wildcard *", pub("a.*")],
      ["nats: wildcard >", pub("a.>")],
      ["nats: $ subject", pub("$JS.API.STREAM.DELETE.EVENTS")],
      ["nats: space in subject", pub("a b")],
      ["nats: empty token", pub("a..b")],
      ["nats: idem's own subjects", pub("jobs.writer", { target: "own" })],
      ["nats: Nats-Msg-Id header", pub("ok", { headers: { "Nats-Msg-Id": "forged" } })],
      ["http: protocol-relative path", http("//evil.example/x")],
      ["http: dot segments", http("/../admin")],
      ["http: absolute URL", http("http://evil.example/")],
      ["http: encoded dot segments", http("/%2e%2e/admin")],
      ["http: userinfo trick", http("@evil.example/x")],
      ["http: backslash", http("/\\\\evil.example")],
      ["http: Authorization header", http("/ok", { headers: { Authorization: "Bearer x" } })],
      ["http: Host header", http("/ok", { headers: { Host: "evil.example" } })],
      ["http: Idempotency-Key override", http("/ok", { headers: { "idempotency-key": "forged" } })],
      ["http: header value with CRLF", http("/ok", { headers: { "X-A": "1\r\nX-Injected: 1" } })],
      ["http: unknown target", http("/ok", { target: "nope" })],
    );
  });
  afterAll(async () => {
    await fx?.close();
    server?.close();
    sb?.cleanup();
  });

  it("has at least 40 hostile specs", () => {
    expect(hostile.length).toBeGreaterThanOrEqual(40);
  });

  it("refuses every one with a validation error, before any write", async () => {
    const before = snapshot();
    const failures: string[] = [];
    for (const [name, spec, key] of hostile) {
      for (const op of ["probe", "apply"] as const) {
        if (op === "probe" && (spec.kind === "nats.publish" || spec.kind === "http.request"))
          continue;
        try {
          if (op === "probe") await fx.probe(spec, key ?? "sec/0");
          else await fx.apply(spec, key ?? "sec/0");
          failures.push(`${name} (${op}): accepted`);
        } catch (e) {
          if (!isIdemError(e) || e.class !== "validation")
            failures.push(`${name} (${op}): ${String(e)}`);
        }
      }
      const now = snapshot();
      if (now !== before) failures.push(`${name}: changed the target: ${now} vs ${before}`);
    }
    expect(failures).toEqual([]);
    expect(requests).toBe(0);
  });
});
