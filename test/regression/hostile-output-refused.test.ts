// Issue 31: outputs that passed validation and could never succeed, or that the JSON parser changed
// without a word. Each is now refused before record, naming the field: through the built CLI
// (`idem submit`, the text path every front end shares) and through the HTTP API, whose body is
// checked as bytes.
import { execFile, execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createExecutorMetrics, startApiServer } from "@idem/executor";
import { openSqliteJournal } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { parseConfig } from "@idem/schema";
import { tempDir } from "@idem/testing";
import { beforeAll, describe, expect, it } from "vitest";
import { IDEM_BIN, REPO_ROOT } from "../chaos/interpreter-fixture.js";

const run = promisify(execFile);

beforeAll(() => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
}, 180_000);

const RAW_CONFIG = {
  journal: { path: "journal.db" },
  repos: { site: { path: "site" } },
  roots: { outbox: { path: "outbox" } },
  publish: { events: { subjectPrefix: "events", stream: "EVENTS" } },
  http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9/api" } } },
};

const commit = (path: string) => ({
  kind: "git.commit",
  repo: "site",
  message: "m",
  files: [{ path, content: "x\n" }],
});
const patch = (path: string) => ({
  kind: "git.patch",
  repo: "site",
  message: "m",
  patch: `diff --git a/${path} b/${path}\nnew file mode 100644\n--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+x\n`,
});
const renamePatch = (to: string) => ({
  kind: "git.patch",
  repo: "site",
  message: "m",
  patch: `diff --git a/a.txt b/${to}\nsimilarity index 100%\nrename old a.txt\nrename new ${to}\n`,
});
const write = (path: string) => ({ kind: "file.write", root: "outbox", path, content: "x" });
const http = (extra: Record<string, unknown>) => ({
  kind: "http.request",
  target: "hooks",
  method: "POST",
  path: "/hook",
  ...extra,
});

/** Paths git refuses (verify_path with NTFS and HFS+ protection) or a file system cannot take. */
const GIT_PATHS = [".git /x", ".git./x", "git~1/x", "GIT~1/x", ".git\u200c/x", ".gitmodules"];
const LONG_SEGMENT = `d/${"s".repeat(300)}.txt`;
const OBJECT_NAMES = ["constructor", "toString", "hasOwnProperty", "__proto__", "valueOf"];

/** Each case: one effect, and the field path its issue must name. */
const CASES: [string, Record<string, unknown>, string][] = [
  ...GIT_PATHS.map((p): [string, Record<string, unknown>, string] => [
    `git.commit path ${JSON.stringify(p)}`,
    commit(p),
    "effects.0.files.0.path",
  ]),
  ...GIT_PATHS.map((p): [string, Record<string, unknown>, string] => [
    `git.patch path ${JSON.stringify(p)}`,
    patch(p),
    "effects.0.patch",
  ]),
  ...GIT_PATHS.map((p): [string, Record<string, unknown>, string] => [
    `git.patch rename new ${JSON.stringify(p)}`,
    renamePatch(p),
    "effects.0.patch",
  ]),
  ...GIT_PATHS.map((p): [string, Record<string, unknown>, string] => [
    `file.write path ${JSON.stringify(p)}`,
    write(p),
    "effects.0.path",
  ]),
  ["git.commit with a 300-byte segment", commit(LONG_SEGMENT), "effects.0.files.0.path"],
  ["file.write with a 300-byte segment", write(LONG_SEGMENT), "effects.0.path"],
  ["git.patch with a 300-byte segment", patch(LONG_SEGMENT), "effects.0.patch"],
  ...OBJECT_NAMES.flatMap((name): [string, Record<string, unknown>, string][] => [
    [`repo ${name}`, { ...commit("a.txt"), repo: name }, "effects.0.repo"],
    [`patch repo ${name}`, { ...patch("a.txt"), repo: name }, "effects.0.repo"],
    [`root ${name}`, { ...write("a.txt"), root: name }, "effects.0.root"],
    [`http target ${name}`, http({ target: name }), "effects.0.target"],
    [
      `publish target ${name}`,
      { kind: "nats.publish", target: name, subject: "s", data: 1 },
      "effects.0.target",
    ],
  ]),
  [
    "a header value above U+00FF",
    http({ headers: { "X-Name": "Ren\u00e9 \u20ac" } }),
    "effects.0.headers.X-Name",
  ],
  [
    "a header value with a control character",
    http({ headers: { "X-A": "a\u0001b" } }),
    "effects.0.headers.X-A",
  ],
  ["a path parameter that hides '..'", http({ path: "/x/..;/y" }), "effects.0.path"],
  ["a double-encoded '..'", http({ path: "/%252e%252e/admin" }), "effects.0.path"],
  [
    "an encoded '..' behind %25 escapes",
    http({ path: "/a/%25%32%65%25%32%65/b" }),
    "effects.0.path",
  ],
];

const output = (jobId: string, effect: Record<string, unknown>) =>
  JSON.stringify({ jobId, agent: "writer", effects: [effect] });

interface Answer {
  status: string;
  issues?: { path: string; message: string }[];
}

describe("hostile outputs refused before record (issue 31)", () => {
  it("idem submit answers invalid, naming the field, for each and records nothing", async () => {
    await using dir = await tempDir("idem-hostile-cli-");
    const configFile = join(dir.path, "idem.config.json");
    writeFileSync(configFile, JSON.stringify(RAW_CONFIG));
    const lines = CASES.map(([, effect], i) => output(`case-${i}`, effect));
    const file = join(dir.path, "outputs.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const r = await run(
      process.execPath,
      [IDEM_BIN, "submit", file, "--json", "--config", configFile],
      {
        env: { ...process.env, IDEM_LOG_LEVEL: "warn" },
      },
    ).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect("code" in r ? r.code : 0, r.stderr).toBe(1);
    const answers = JSON.parse(r.stdout) as Answer[];
    expect(answers).toHaveLength(CASES.length);
    CASES.forEach(([name, , field], i) => {
      const a = answers[i] as Answer;
      expect(a.status, name).toBe("invalid");
      expect(
        a.issues?.map((x) => x.path),
        `${name}: ${JSON.stringify(a.issues)}`,
      ).toContain(field);
    });
    const journal = await openSqliteJournal(join(dir.path, "journal.db"));
    try {
      expect((await journal.outputs.list({})).length).toBe(0);
    } finally {
      await journal.close();
    }
  });

  it("the HTTP API answers 400 invalid naming the field, never 503, for an object-property alias", async () => {
    await using dir = await tempDir("idem-hostile-api-");
    await using api = await startApi(dir.path);
    let n = 0;
    for (const [name, effect, field] of CASES.filter(([name]) =>
      /constructor|__proto__/.test(name),
    )) {
      n += 1;
      const r = await post(api.url, output(`alias-${n}`, effect));
      const body = (await r.json()) as Answer;
      expect(r.status, `${name}: ${JSON.stringify(body)}`).toBe(400);
      expect(body.issues?.map((x) => x.path)).toContain(field);
    }
  });

  it("the HTTP API refuses bodies JSON.parse would change: bad UTF-8, a key twice, a big integer", async () => {
    await using dir = await tempDir("idem-hostile-json-");
    await using api = await startApi(dir.path);
    const base = output("utf8-1", write("a.txt")).replace('"content":"x"', '"content":"A\u00ffB"');
    // Two bodies that differ only in a byte that is not UTF-8: both used to read as U+FFFD.
    const bodies = [0x80, 0xc3].map((b) => {
      const bytes = Buffer.from(base, "latin1");
      bytes[bytes.indexOf(0xff)] = b;
      return bytes;
    });
    for (const body of bodies) {
      const r = await post(api.url, body);
      const answer = (await r.json()) as Answer;
      expect(r.status, JSON.stringify(answer)).toBe(400);
      expect(answer.issues?.[0]?.message).toMatch(/UTF-8/);
    }
    const dup = `{"jobId":"dup-1","agent":"writer","effects":[{"kind":"file.write","root":"outbox","path":"a.txt","path":"b.txt","content":"x"}]}`;
    const r1 = await post(api.url, dup);
    expect(r1.status).toBe(400);
    expect(((await r1.json()) as Answer).issues?.map((x) => x.path)).toEqual(["effects.0.path"]);
    const big = `{"jobId":"big-1","agent":"writer","effects":[],"meta":{"n":9007199254740993}}`;
    const r2 = await post(api.url, big);
    expect(r2.status).toBe(400);
    expect(((await r2.json()) as Answer).issues?.map((x) => x.path)).toEqual(["meta.n"]);
    // 2^53 - 1 and a float are kept as sent.
    const fine = `{"jobId":"big-2","agent":"writer","effects":[],"meta":{"n":9007199254740991,"f":1.5e300}}`;
    expect((await post(api.url, fine)).status).toBe(201);
  });
});

async function startApi(dir: string) {
  const parsed = parseConfig(RAW_CONFIG, { dir });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const journal = await openSqliteJournal(parsed.config.journal.path);
  const api = await startApiServer({
    config: parsed.config,
    journal,
    metrics: createExecutorMetrics(),
    logger: silentLogger(),
    port: 0,
  });
  return {
    url: api.url,
    async [Symbol.asyncDispose]() {
      await api.close();
      await journal.close();
    },
  };
}

function post(url: string, body: string | Buffer): Promise<Response> {
  return fetch(`${url}/v1/outputs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
}
