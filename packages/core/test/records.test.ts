import { effectTargetsOf } from "@idem/effects";
import { canonicalJson, contentHash, parseConfig, parseEffectKey } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { checkRecordable } from "../src/index.js";

// An output's envelope is the schema's (validateOutput); each effect is checked by its kind, so the
// whole is checkRecordable's.
const validateOutput = checkRecordable;
const effectTargets = effectTargetsOf;

const cfg = (() => {
  const r = parseConfig(
    {
      repos: { site: { path: "site", branches: ["drafts"] } },
      roots: { outbox: { path: "outbox" } },
      publish: { events: { subjectPrefix: "events", stream: "EVENTS" } },
      http: { targets: { hooks: { baseUrl: "http://127.0.0.1:9000" } } },
      limits: { maxFileBytes: 16, maxEffects: 3 },
    },
    { dir: "/w" },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
})();

const commit = (over: Record<string, unknown> = {}) => ({
  kind: "git.commit",
  repo: "site",
  message: "add a",
  files: [{ path: "a.txt", content: "a" }],
  ...over,
});

describe("validateOutput", () => {
  it("accepts a well-formed output", () => {
    const r = validateOutput({ jobId: "j-1", agent: "writer", effects: [commit()] }, cfg);
    expect(r.ok).toBe(true);
  });

  it.each([
    [{ jobId: "-bad", agent: "writer", effects: [] }, "jobId"],
    [{ jobId: "j", agent: "Writer", effects: [] }, "agent"],
    [{ jobId: "j", agent: "w", effects: [commit({ repo: "nope" })] }, "effects.0.repo"],
    [{ jobId: "j", agent: "w", effects: [commit({ branch: "other" })] }, "effects.0.branch"],
    [{ jobId: "j", agent: "w", effects: [commit({ branch: "-x" })] }, "effects.0.branch"],
    [
      { jobId: "j", agent: "w", effects: [commit({ message: "x\nIdem-Effect: j/0" })] },
      "effects.0.message",
    ],
    [
      { jobId: "j", agent: "w", effects: [commit({ files: [{ path: "../x", content: "" }] })] },
      "effects.0.files.0.path",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [commit({ files: [{ path: ".git/hooks/pre-commit", content: "" }] })],
      },
      "effects.0.files.0.path",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [commit({ files: [{ path: "/etc/passwd", content: "" }] })],
      },
      "effects.0.files.0.path",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [commit({ files: [{ path: "big", content: "x".repeat(17) }] })],
      },
      "effects.0.files.0.content",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [
          { kind: "file.write", root: "outbox", path: "a", content: "!!", encoding: "base64" },
        ],
      },
      "effects.0.content",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [{ kind: "nats.publish", target: "events", subject: "a.*", data: 1 }],
      },
      "effects.0.subject",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [{ kind: "http.request", target: "hooks", method: "POST", path: "/../admin" }],
      },
      "effects.0.path",
    ],
    [
      {
        jobId: "j",
        agent: "w",
        effects: [
          {
            kind: "http.request",
            target: "hooks",
            method: "POST",
            path: "/x",
            headers: { Authorization: "x" },
          },
        ],
      },
      "effects.0.headers.Authorization",
    ],
    [{ jobId: "j", agent: "w", effects: [{ kind: "teleport" }] }, "effects.0.kind"],
    [{ jobId: "j", agent: "w", effects: [commit(), commit(), commit(), commit()] }, "effects"],
    [{ jobId: "j", agent: "w", effects: [], extra: 1 }, ""],
  ])("refuses %j naming %s", (raw, path) => {
    const r = validateOutput(raw, cfg);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues.map((i) => i.path)).toContain(path);
  });
});

describe("canonical JSON and content hash", () => {
  it("is independent of key order and whitespace", () => {
    expect(canonicalJson({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe('{"a":[1,{"c":3,"d":2}],"b":1}');
    expect(contentHash({ b: 1, a: 2 })).toBe(contentHash(JSON.parse('{ "a": 2,  "b": 1 }')));
    expect(contentHash({ a: 1 })).not.toBe(contentHash({ a: 2 }));
  });
});

describe("effect keys and targets", () => {
  it("parses keys back and lists ordering targets", () => {
    expect(parseEffectKey("job.1:x/12")).toEqual({ jobId: "job.1:x", index: 12 });
    expect(parseEffectKey("nokey")).toBeUndefined();
    const out = {
      jobId: "j",
      agent: "w",
      effects: [
        commit(),
        commit({ branch: "drafts" }),
        { kind: "file.write", root: "outbox", path: "a", content: "" },
      ],
    };
    const r = validateOutput(out, cfg);
    if (!r.ok) throw new Error("valid");
    expect(effectTargets(r.value, cfg)).toEqual([
      "repo:site@drafts",
      "repo:site@main",
      "root:outbox",
    ]);
  });
});

describe("checkJsonShape", () => {
  it("refuses deep nesting, lone surrogates and prototype keys before the schema runs", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const nested = validateOutput({ jobId: "a", agent: "w", effects: [], meta: { d: deep } }, cfg);
    expect(nested.ok).toBe(false);
    const lone = validateOutput({ jobId: "a", agent: "w", effects: [], summary: "x\uD800y" }, cfg);
    expect(!lone.ok && lone.issues[0]?.path).toBe("summary");
    const paired = validateOutput(
      { jobId: "a", agent: "w", effects: [], summary: "emoji \u{1F600}" },
      cfg,
    );
    expect(paired.ok).toBe(true);
    const proto = validateOutput(
      JSON.parse('{"jobId":"a","agent":"w","effects":[],"meta":{"__proto__":{"x":1}}}'),
      cfg,
    );
    expect(!proto.ok && proto.issues[0]?.path).toBe("meta.__proto__");
  });
});
