// The console answers an action's failure with its code's HTTP status from the one table
// (ERROR_CODES of @idem/schema): a 4xx as a refusal, anything else through its error page, and 503
// for an error without a code, as the executor's API does.
import { dirname, join } from "node:path";
import { openEffects } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { ERROR_CODES, type ErrorCode, IdemError, parseConfig } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createConsole } from "../src/index.js";

/** The real journal, but every read of its runs fails with `error` (a fault injected at the port). */
function failingRuns(journal: JournalStore, error: () => unknown): JournalStore {
  const runs = new Proxy(journal.runs, {
    get: () => async () => {
      throw error();
    },
  });
  return new Proxy(journal, {
    get: (target, name, receiver) => (name === "runs" ? runs : Reflect.get(target, name, receiver)),
  });
}

describe("the console's statuses of failures", () => {
  it("answers each error code of an action with the table's HTTP status, an uncoded error 503", async () => {
    await using t = await tempJournal();
    const parsed = parseConfig(
      { journal: { path: t.path } },
      { dir: dirname(t.path), file: join(dirname(t.path), "idem.config.json") },
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const effects = openEffects(parsed.config);
    let next: () => unknown = () => undefined;
    const c = createConsole({
      config: parsed.config,
      journal: failingRuns(t.journal, () => next()),
      effects,
      actor: "status-test",
      token: "t0ken",
    });
    const retry = async () => {
      const r = await c.app.request("http://127.0.0.1:7071/dead-letters/retry", {
        method: "POST",
        headers: {
          host: "127.0.0.1:7071",
          "content-type": "application/x-www-form-urlencoded",
          authorization: "Bearer t0ken",
          accept: "application/json",
        },
        body: new URLSearchParams({ job: "j-1", actor: "script" }).toString(),
      });
      return { status: r.status, body: (await r.json()) as { error: string } };
    };
    try {
      for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
        next = () => new IdemError(code, "it failed");
        expect(await retry(), code).toEqual({
          status: ERROR_CODES[code].http,
          body: { error: `${code}: it failed` },
        });
      }
      next = () => new TypeError("The database connection is not open");
      expect((await retry()).status).toBe(503);
    } finally {
      c.close();
      await effects.close();
    }
  });
});
