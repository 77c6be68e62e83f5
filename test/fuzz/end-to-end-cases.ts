// The generated outputs of the end-to-end fuzz suite: each effect is either one the interpreter
// must apply exactly once, or one that must be refused before record (a hostile piece: a path git
// refuses, a rename header naming one, an object-property alias, a header value fetch cannot send,
// an http path a server could normalise out of its base). Whole submissions are also mangled as
// JSON.parse would silently change them (bad UTF-8, a key twice, a big integer).
import fc from "fast-check";

/** Paths git and every file system take, with the spellings close to the refused ones. */
export const GOOD_PATHS = [
  "a.txt",
  "docs/readme.md",
  "caf\u00e9/na\u00efve.txt",
  "a b.txt",
  ".gitignore",
  ".github/ci.yml",
  "git/x",
  "git~2/x",
  ".gitx/y",
  "x.git/y",
  "sub/.gitattributes",
  ".git\u200b/x",
  "s".repeat(255),
];

/** Paths refused before record (git's verify_path with NTFS and HFS+ rules, fsck, NAME_MAX). */
export const HOSTILE_PATHS = [
  ".git /x",
  ".git./x",
  ".git . ./x",
  "git~1/x",
  "GIT~1/x",
  ".git\u200c/x",
  ".GIT\ufeff/x",
  "\u202e.git/x",
  ".git::$INDEX_ALLOCATION/x",
  ".gitmodules",
  "gitmod~1",
  "GI7EBA~1",
  ".gitattributes/x",
  ".git/hooks/pre-commit",
  "s".repeat(256),
  "../x",
  "a/../../x",
  "a//b",
];

const OBJECT_NAMES = ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"];
const GOOD_URL_PATHS = ["/hook", "/hook/a.b", "/items?x=1", "/a%20b", "/a;v=1/b"];
const HOSTILE_URL_PATHS = [
  "/x/..;/y",
  "/x/.;a/y",
  "/%252e%252e/admin",
  "/a/%25%32%65%25%32%65/b",
  "/a%252fb",
  "/../x",
  "/a/%2e%2e/x",
];
const GOOD_HEADERS = ["text", "Ren\u00e9", "a\tb", "x=1; y=2"];
const HOSTILE_HEADERS = ["5 \u20ac", "\u0100", "a\u0001b", "a\u007fb", " lead", "trail "];

/** One generated effect before it is given its job: what it is and whether it must be refused. */
export type Plan =
  | { kind: "commit"; path: string; bad: boolean; alias?: string }
  | { kind: "new-patch"; path: string; bad: boolean; alias?: string }
  | { kind: "rename"; path: string; bad: boolean; old: boolean; hunk: boolean; alias?: string }
  | { kind: "write"; path: string; bad: boolean; alias?: string }
  | { kind: "http"; path: string; header?: string; bad: "path" | "headers" | false; alias?: string }
  | { kind: "publish"; alias: string };

/** A whole-submission mangling that JSON.parse would hide. */
export type Mangle = "none" | "dup-key" | "big-int" | "bad-utf8";

const path = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...GOOD_PATHS).map((p) => ({ p, bad: false })) },
  { weight: 1, arbitrary: fc.constantFrom(...HOSTILE_PATHS).map((p) => ({ p, bad: true })) },
);
/** Now and then an alias every JavaScript object has instead of the configured one. */
const alias = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom(...OBJECT_NAMES) },
);

const plans: fc.Arbitrary<Plan>[] = [
  fc.record({ path, alias }).map(
    ({ path: p, alias: a }): Plan => ({
      kind: "commit",
      path: p.p,
      bad: p.bad,
      ...(a ? { alias: a } : {}),
    }),
  ),
  fc.record({ path, alias }).map(
    ({ path: p, alias: a }): Plan => ({
      kind: "new-patch",
      path: p.p,
      bad: p.bad,
      ...(a ? { alias: a } : {}),
    }),
  ),
  fc.record({ path, old: fc.boolean(), hunk: fc.boolean(), alias }).map(
    (r): Plan => ({
      kind: "rename",
      path: r.path.p,
      bad: r.path.bad,
      old: r.old,
      hunk: r.hunk,
      ...(r.alias ? { alias: r.alias } : {}),
    }),
  ),
  fc.record({ path, alias }).map(
    ({ path: p, alias: a }): Plan => ({
      kind: "write",
      path: p.p,
      bad: p.bad,
      ...(a ? { alias: a } : {}),
    }),
  ),
  fc
    .record({
      badPath: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, fc.constant(true)),
      header: fc.option(
        fc.oneof(
          {
            weight: 3,
            arbitrary: fc.constantFrom(...GOOD_HEADERS).map((v) => ({ v, bad: false })),
          },
          {
            weight: 1,
            arbitrary: fc.constantFrom(...HOSTILE_HEADERS).map((v) => ({ v, bad: true })),
          },
        ),
        { nil: undefined },
      ),
      pick: fc.nat(),
      alias,
    })
    .map((r): Plan => {
      const paths = r.badPath ? HOSTILE_URL_PATHS : GOOD_URL_PATHS;
      return {
        kind: "http",
        path: paths[r.pick % paths.length] as string,
        ...(r.header ? { header: r.header.v } : {}),
        bad: r.badPath ? "path" : r.header?.bad ? "headers" : false,
        ...(r.alias ? { alias: r.alias } : {}),
      };
    }),
];
/** One effect's plan: each kind alike, a publish (always to an object-property name) now and then. */
const plan: fc.Arbitrary<Plan> = fc.oneof(...plans.map((arbitrary) => ({ weight: 4, arbitrary })), {
  weight: 1,
  arbitrary: fc.constantFrom(...OBJECT_NAMES).map((a): Plan => ({ kind: "publish", alias: a })),
});

/** A generated submission: its effects' plans and how its text is mangled. */
export const submissionPlan = fc.record({
  plans: fc.array(plan, { minLength: 1, maxLength: 3 }),
  mangle: fc.oneof(
    { weight: 12, arbitrary: fc.constant<Mangle>("none") },
    { weight: 1, arbitrary: fc.constantFrom<Mangle>("dup-key", "big-int", "bad-utf8") },
  ),
});

/**
 * The fields (under `effects.<i>.`) whose refusal a plan must get, empty when it must be applied.
 * A plan with two hostile pieces may be refused for either: the schema names a bad path before the
 * config is asked about the alias.
 */
export function refusals(p: Plan): string[] {
  if (p.kind === "publish") return ["target"];
  const fields: string[] = [];
  if (p.alias !== undefined)
    fields.push(p.kind === "http" ? "target" : p.kind === "write" ? "root" : "repo");
  if (p.kind === "http") {
    if (p.bad !== false) fields.push(p.bad);
  } else if (p.bad) {
    fields.push(p.kind === "commit" ? "files" : p.kind === "write" ? "path" : "patch");
  }
  return fields;
}

export const SEED = "one\ntwo\nthree\n";

/** Where the effect `index` of job `jobId` writes: its own folder, so no two effects collide. */
export const folderOf = (jobId: string, index: number) => `${jobId}/${index}`;

/**
 * The effect a plan makes as effect `index` of job `jobId` (its paths under
 * {@link folderOf}; `seed` the file a rename moves).
 */
export function effectOf(
  p: Plan,
  jobId: string,
  index: number,
  seed: string,
): Record<string, unknown> {
  const dir = folderOf(jobId, index);
  const repo = p.kind !== "publish" && p.alias !== undefined ? p.alias : "site";
  switch (p.kind) {
    case "commit":
      return {
        kind: "git.commit",
        repo,
        message: `commit ${jobId}`,
        files: [{ path: `${dir}/${p.path}`, content: `content of ${jobId}\n` }],
      };
    case "new-patch": {
      const to = `${dir}/${p.path}`;
      return {
        kind: "git.patch",
        repo,
        message: `patch ${jobId}`,
        patch: `diff --git a/${to} b/${to}\nnew file mode 100644\n--- /dev/null\n+++ b/${to}\n@@ -0,0 +1,2 @@\n+patched\n+${jobId}\n`,
      };
    }
    case "rename": {
      const to = `${dir}/${p.path}`;
      const [from, into] = p.old ? ["rename old", "rename new"] : ["rename from", "rename to"];
      const hunk = p.hunk
        ? `--- a/${seed}\n+++ b/${to}\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n`
        : "";
      return {
        kind: "git.patch",
        repo,
        message: `rename ${jobId}`,
        patch: `diff --git a/${seed} b/${to}\nsimilarity index ${p.hunk ? 67 : 100}%\n${from} ${seed}\n${into} ${to}\n${hunk}`,
      };
    }
    case "write":
      return {
        kind: "file.write",
        root: p.alias ?? "outbox",
        path: `${dir}/${p.path}`,
        content: `file of ${jobId}\n`,
      };
    case "http":
      return {
        kind: "http.request",
        target: p.alias ?? "hooks",
        method: "POST",
        path: p.path,
        body: { jobId },
        ...(p.header !== undefined ? { headers: { "X-Fuzz": p.header } } : {}),
      };
    case "publish":
      return { kind: "nats.publish", target: p.alias, subject: "done", data: { jobId } };
  }
}

/**
 * The bytes submitted for `output`, mangled: a key twice in the first effect (`effects.0.kind`),
 * an integer beyond 2^53 in `meta.n`, or a byte that is not UTF-8 in `summary` (the whole body).
 * Also the field path the refusal must name ("" for the whole body); undefined for "none".
 */
export function bodyOf(output: object, mangle: Mangle): { body: Buffer; field?: string } {
  const text = JSON.stringify(output);
  switch (mangle) {
    case "none":
      return { body: Buffer.from(text) };
    case "dup-key":
      return {
        body: Buffer.from(
          text.replace('"effects":[{"kind":', '"effects":[{"kind":"file.write","kind":'),
        ),
        field: "effects.0.kind",
      };
    case "big-int":
      return {
        body: Buffer.from(text.replace(/}$/, ',"meta":{"n":9007199254740993}}')),
        field: "meta.n",
      };
    case "bad-utf8": {
      const body = Buffer.from(text.replace('"summary":"s"', '"summary":"s#"'));
      body[body.indexOf('s#"') + 1] = 0xff;
      return { body, field: "" };
    }
  }
}
