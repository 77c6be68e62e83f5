// The executor's API answers a failure with its code's HTTP status from the one table
// (ERROR_CODES of @idem/schema), whatever the code, and 503 for an error without one.
import { SUBMIT_HTTP_STATUS } from "@idem/core";
import type { JournalStore } from "@idem/journal";
import { silentLogger } from "@idem/runtime";
import { ERROR_CODES, type ErrorCode, IdemError } from "@idem/schema";
import { tempJournal } from "@idem/testing";
import { describe, expect, it } from "vitest";
import { createApiApp, createExecutorMetrics } from "../src/index.js";
import { testConfig } from "./helpers.js";

/** The real journal, but its `status()` fails with `error` (a fault injected at the port). */
function failingStatus(journal: JournalStore, error: () => unknown): JournalStore {
  return new Proxy(journal, {
    get: (target, name, receiver) =>
      name === "status"
        ? async () => {
            throw error();
          }
        : Reflect.get(target, name, receiver),
  });
}

describe("the API's statuses of failures", () => {
  it("answers each error code with the table's HTTP status and its class, an uncoded error 503", async () => {
    await using tj = await tempJournal();
    let next: () => unknown = () => undefined;
    const app = createApiApp({
      config: testConfig({ dir: tj.dir, journalPath: tj.path }),
      journal: failingStatus(tj.journal, () => next()),
      metrics: createExecutorMetrics(),
      logger: silentLogger(),
    });
    const status = async () => {
      const r = await app.request("http://127.0.0.1/v1/status");
      return { status: r.status, body: (await r.json()) as { error: string; class: string } };
    };
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      next = () => new IdemError(code, "it failed");
      const r = await status();
      expect(r.status, code).toBe(ERROR_CODES[code].http);
      expect(r.body, code).toEqual({ error: `${code}: it failed`, class: ERROR_CODES[code].class });
    }
    next = () => new TypeError("The database connection is not open");
    expect(await status()).toMatchObject({ status: 503, body: { class: "logic" } });
  });

  it("answers a submit's refusals with the statuses of their codes: conflict OUTPUT_CONFLICT's, invalid INVALID_INPUT's", () => {
    expect(SUBMIT_HTTP_STATUS.conflict).toBe(ERROR_CODES.OUTPUT_CONFLICT.http);
    expect(SUBMIT_HTTP_STATUS.invalid).toBe(ERROR_CODES.INVALID_INPUT.http);
  });
});
