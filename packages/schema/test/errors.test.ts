import { describe, expect, it } from "vitest";
import {
  ERROR_CODES,
  type ErrorCode,
  EXIT_CODES,
  exitCodeOfError,
  FAILURE_CLASSES,
  httpStatusOfError,
  IdemError,
  UNCODED_ERROR,
} from "../src/index.js";

const CODES = Object.keys(ERROR_CODES) as ErrorCode[];

describe("the one table of error codes", () => {
  it("gives every code a failure class, an HTTP status and an exit code of docs/cli.md", () => {
    const exits = new Set<number>(Object.values(EXIT_CODES));
    for (const code of CODES) {
      const row = ERROR_CODES[code];
      expect(FAILURE_CLASSES, code).toContain(row.class);
      expect(row.http >= 400 && row.http <= 599, code).toBe(true);
      expect(exits.has(row.exit) && (row.exit as number) !== EXIT_CODES.OK, code).toBe(true);
    }
  });

  it("answers by whose fault it is: the request 4xx, a journal that cannot serve 503, a broken rule exit 3", () => {
    const http = (code: ErrorCode) => ERROR_CODES[code].http;
    for (const code of ["INVALID_INPUT", "UNKNOWN_ALIAS", "SANDBOX_VIOLATION", "UNKNOWN_AGENT"])
      expect(http(code as ErrorCode), code).toBe(400);
    for (const code of ["OUTPUT_CONFLICT", "JOB_CONFLICT", "TARGET_CONFLICT", "LEASE_LOST"])
      expect(http(code as ErrorCode), code).toBe(409);
    expect(http("INVALID_STATE")).toBe(409);
    expect(http("NOT_FOUND")).toBe(404);
    for (const code of ["LOCKED", "TIMEOUT", "UNAVAILABLE", "IO", "DISK_FULL", "INTEGRITY"])
      expect(http(code as ErrorCode), code).toBe(503);
    expect(UNCODED_ERROR.http).toBe(503);
    const exit3 = CODES.filter((c) => ERROR_CODES[c].exit === EXIT_CODES.INVARIANT);
    expect(exit3.sort()).toEqual(["INTEGRITY", "INVARIANT_VIOLATION"]);
    const exit2 = CODES.filter((c) => ERROR_CODES[c].exit === EXIT_CODES.USAGE);
    expect(exit2).toEqual(["INVALID_CONFIG"]);
  });

  it("reads an error's status and exit code from its code; anything else is uncoded (503, exit 1)", () => {
    for (const code of CODES) {
      const e = new IdemError(code, "x");
      expect(httpStatusOfError(e), code).toBe(ERROR_CODES[code].http);
      expect(exitCodeOfError(e), code).toBe(ERROR_CODES[code].exit);
    }
    // An IdemError from another copy of the package, with a code this one does not know.
    const stranger = Object.assign(new Error("x"), { name: "IdemError", code: "NEWER_CODE" });
    for (const e of [new TypeError("closed"), stranger, "text", undefined]) {
      expect(httpStatusOfError(e)).toBe(UNCODED_ERROR.http);
      expect(exitCodeOfError(e)).toBe(EXIT_CODES.FAILED);
    }
  });
});
