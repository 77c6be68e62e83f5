// The CLI's exit codes come from the one table of error codes (ERROR_CODES of @idem/schema), the
// same table the HTTP front ends read their statuses from.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ERROR_CODES, type ErrorCode, EXIT_CODES, IdemError } from "@idem/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliError, EXIT, exitCodeOf } from "../src/context.js";
import { idem, type Workspace, workspace } from "./ops-helpers.js";

let ws: Workspace;
beforeEach(() => {
  ws = workspace();
});
afterEach(() => ws.remove());

describe("the CLI's exit codes", () => {
  it("are the schema's EXIT_CODES, spelled out so that a usage error loads no package", () => {
    expect(EXIT).toEqual(EXIT_CODES);
  });

  it("exit each error code with the table's exit code; a CliError keeps its own, anything else 1", () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      expect(exitCodeOf(new IdemError(code, "x")), code).toBe(ERROR_CODES[code].exit);
    }
    expect(exitCodeOf(new CliError("usage", EXIT.USAGE))).toBe(2);
    expect(exitCodeOf(new TypeError("x"))).toBe(1);
  });

  it("exits 3 (INTEGRITY) for a journal file that is not a journal, 2 (INVALID_CONFIG) for a bad key", async () => {
    mkdirSync(join(ws.dir, ".idem"), { recursive: true });
    writeFileSync(
      join(ws.dir, ".idem/journal.db"),
      "not a database at all, just text ".repeat(100),
    );
    const status = await idem(["status", "--config", ws.config]);
    expect(status.code, status.stderr).toBe(ERROR_CODES.INTEGRITY.exit);
    ws.writeConfig({ journal: { synchronous: "SOMETIMES" } });
    const bad = await idem(["status", "--config", ws.config]);
    expect(bad.code, bad.stderr).toBe(EXIT_CODES.USAGE);
  });
});
