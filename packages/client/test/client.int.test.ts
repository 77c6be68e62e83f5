import { IDEM_KINDS } from "@idem/core";
import { describe, expect, it } from "vitest";
import {
  createClient,
  fileWrite,
  gitCommit,
  githubComment,
  githubIssue,
  githubPullRequest,
  gitPatch,
  httpRequest,
  isIdemClientError,
  natsPublish,
  slackMessage,
  sqlExec,
} from "../src/index.js";
import { droppingFetch, startExecutorWithApi, TOKEN, waitFor } from "./helpers.js";

const output = (jobId: string, content = "hi") => ({
  jobId,
  agent: "writer",
  summary: "a note",
  effects: [fileWrite({ root: "outbox", path: `${jobId}.md`, content })],
});

describe("the client against a real executor", () => {
  it("submits (recorded, duplicate, conflict, invalid with the issues), reads the output back and reads the status", async () => {
    await using env = await startExecutorWithApi();
    const client = createClient({ baseUrl: env.url, token: TOKEN });
    expect(await client.submit(output("c-1"))).toEqual({ status: "recorded", jobId: "c-1" });
    expect(await client.submit(output("c-1"))).toEqual({ status: "duplicate", jobId: "c-1" });
    expect((await client.submit(output("c-1", "other"))).status).toBe("conflict");
    const invalid = await client.submit({ ...output("c-2"), agent: "Not A Name" });
    expect(invalid.status).toBe("invalid");
    expect(invalid.issues?.map((i) => i.path)).toContain("agent");
    const rec = await client.get("c-1");
    expect(rec?.output).toMatchObject({ jobId: "c-1", summary: "a note" });
    expect(await client.get("c-404")).toBeUndefined();
    expect(await client.status()).toMatchObject({ outputs: 1 });
  });

  it("answers duplicate when a submit is retried after its answer was lost to a timeout", async () => {
    await using env = await startExecutorWithApi();
    const dropping = droppingFetch(1);
    const client = createClient({
      baseUrl: env.url,
      token: TOKEN,
      fetch: dropping.fetch,
      retry: { initialMs: 1 },
    });
    expect(await client.submit(output("c-3"))).toEqual({ status: "duplicate", jobId: "c-3" });
    expect(dropping.calls).toHaveLength(2);
    expect(dropping.calls[0]).toMatch(/-> 201$/);
    expect((await client.get("c-3"))?.output).toMatchObject({ jobId: "c-3" });
  });

  it("retries a 5xx and answers duplicate for the write the first try made", async () => {
    await using env = await startExecutorWithApi();
    const dropping = droppingFetch(1, "503");
    const client = createClient({
      baseUrl: env.url,
      token: TOKEN,
      fetch: dropping.fetch,
      retry: { initialMs: 1 },
    });
    expect((await client.submit(output("c-4"))).status).toBe("duplicate");
    expect(dropping.calls).toHaveLength(2);
  });

  it("enqueues a job over HTTP, answers a duplicate for the same job again, and the executor records its output", async () => {
    await using env = await startExecutorWithApi();
    const client = createClient({ baseUrl: env.url, token: TOKEN });
    const job = { jobId: "c-5", agent: "writer", input: { n: 1 } };
    expect(await client.enqueue(job)).toMatchObject({
      jobId: "c-5",
      stream: "embedded",
      duplicate: false,
    });
    expect((await client.enqueue(job)).duplicate).toBe(true);
    await waitFor("the output of c-5", async () => (await client.get("c-5")) !== undefined);
    expect((await client.get("c-5"))?.output).toMatchObject({ summary: "answer to c-5" });
    const conflict = await client.enqueue({ ...job, input: { n: 2 } }).catch((e: unknown) => e);
    expect(isIdemClientError(conflict, "JOB_CONFLICT")).toBe(true);
    const unknown = await client
      .enqueue({ jobId: "c-6", agent: "nobody", input: {} })
      .catch((e: unknown) => e);
    expect(isIdemClientError(unknown, "INVALID_INPUT")).toBe(true);
  });

  it("throws UNAUTHORIZED with status 401 without the right token, and never puts the token in the message", async () => {
    await using env = await startExecutorWithApi();
    const none = await createClient({ baseUrl: env.url })
      .status()
      .catch((e: unknown) => e);
    expect(isIdemClientError(none, "UNAUTHORIZED")).toBe(true);
    expect(none).toMatchObject({ code: "UNAUTHORIZED", status: 401 });
    const wrong = "wrong-token-do-not-print";
    const err = await createClient({ baseUrl: env.url, token: wrong })
      .submit(output("c-7"))
      .catch((e: unknown) => e);
    expect(isIdemClientError(err, "UNAUTHORIZED")).toBe(true);
    expect(String((err as Error).message)).not.toContain(wrong);
    expect(JSON.stringify(err)).not.toContain(wrong);
  });
});

describe("the client's failures", () => {
  it("throws UNAVAILABLE after its attempts when nothing answers, and TIMEOUT when every try times out", async () => {
    const refused: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    const opts = { baseUrl: "http://127.0.0.1:9", retry: { attempts: 3, initialMs: 1 } };
    let calls = 0;
    const counting: typeof fetch = async (i, init) => {
      calls += 1;
      return refused(i, init);
    };
    const e1 = await createClient({ ...opts, fetch: counting })
      .status()
      .catch((e: unknown) => e);
    expect(e1).toMatchObject({ code: "UNAVAILABLE", status: undefined });
    expect(calls).toBe(3);
    const timingOut: typeof fetch = async () => {
      throw new DOMException("The operation timed out.", "TimeoutError");
    };
    const e2 = await createClient({ ...opts, fetch: timingOut })
      .status()
      .catch((e: unknown) => e);
    expect(isIdemClientError(e2, "TIMEOUT")).toBe(true);
  });

  it("does not retry a 4xx", async () => {
    let calls = 0;
    const f: typeof fetch = async () => {
      calls += 1;
      return new Response('{"error":"the body is larger than api.maxBodyBytes (1)"}', {
        status: 413,
      });
    };
    const e = await createClient({ baseUrl: "http://x.invalid", fetch: f })
      .submit(output("c-8"))
      .catch((err: unknown) => err);
    expect(e).toMatchObject({ code: "TOO_LARGE", status: 413 });
    expect(calls).toBe(1);
  });
});

describe("the effect builders", () => {
  it("build an effect each kind idem ships accepts, one builder for every kind", () => {
    const specs = [
      gitCommit({ repo: "site", message: "add a", files: [{ path: "a.md", content: "a" }] }),
      gitPatch({ repo: "site", message: "patch", patch: "--- a/x\n+++ b/x\n" }),
      fileWrite({ root: "outbox", path: "a.txt", content: "a" }),
      natsPublish({ target: "events", subject: "notes.created", data: { id: 1 } }),
      httpRequest({ target: "crm", method: "POST", path: "/notes", body: { id: 1 } }),
      githubIssue({ repo: "app", title: "Flaky test", body: "seen twice", labels: ["bug"] }),
      githubComment({ repo: "app", number: 12, body: "fixed in #13" }),
      githubPullRequest({ repo: "app", title: "Fix", head: "idem/fix", base: "main" }),
      slackMessage({ channel: "ops", text: "deployed" }),
      sqlExec({ target: "crm", statements: [{ name: "add_note", params: { id: 1 } }] }),
    ];
    expect(specs.map((s) => s.kind).sort()).toEqual(IDEM_KINDS.map((k) => k.name).sort());
    for (const s of specs) {
      const kind = IDEM_KINDS.find((k) => k.name === s.kind);
      const parsed = kind?.spec.safeParse(s);
      expect(parsed?.success, `${s.kind}: ${JSON.stringify(parsed?.error?.issues)}`).toBe(true);
    }
  });
});
