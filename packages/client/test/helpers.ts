import { createExecutor, createExecutorMetrics, startApiServer } from "@idem/executor";
import { silentLogger } from "@idem/runtime";
import { parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";

export const TOKEN = "s3cret-token-for-tests";

/** A real executor on the embedded queue with an in-process agent `writer`, and its HTTP API. */
export async function startExecutorWithApi() {
  const tj = await tempJournal();
  const parsed = parseConfig(
    {
      journal: { path: tj.path },
      agents: { writer: { command: [process.execPath, "-e", "0"], timeoutMs: 600_000 } },
      roots: { outbox: { path: "outbox" } },
      api: { token: TOKEN },
    },
    { dir: tj.dir },
  );
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const config = parsed.config;
  const metrics = createExecutorMetrics();
  const executor = createExecutor({
    config,
    journal: tj.journal,
    metrics,
    logger: silentLogger(),
    pollMs: 20,
    run: async (job) => ({
      summary: `answer to ${job.jobId}`,
      effects: [{ kind: "file.write", root: "outbox", path: `${job.jobId}.txt`, content: "hi" }],
    }),
  });
  await executor.start();
  const api = await startApiServer({
    config,
    journal: tj.journal,
    metrics,
    logger: silentLogger(),
    port: 0,
  });
  return {
    url: api.url,
    journal: tj.journal,
    async [Symbol.asyncDispose]() {
      await api.close();
      await executor.stop();
      await tj.dispose();
    },
  };
}

/**
 * A fetch that forwards every request to the server and, for the first `drops` calls, throws a
 * timeout once the server has answered: the answer is lost after the write was made.
 */
export function droppingFetch(drops: number, how: "timeout" | "503" = "timeout") {
  const calls: string[] = [];
  const f: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    calls.push(`${init?.method ?? "GET"} ${String(input)} -> ${res.status}`);
    if (calls.length > drops) return res;
    await res.arrayBuffer();
    if (how === "503") return new Response('{"error":"busy"}', { status: 503 });
    throw new DOMException("The operation timed out.", "TimeoutError");
  };
  return { fetch: f, calls };
}

/** Polls `check` every 50 ms until it holds, for up to a generous minute. */
export async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
