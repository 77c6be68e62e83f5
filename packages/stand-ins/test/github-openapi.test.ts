import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { reduceDescription } from "../src/github/github-description.js";
import { GITHUB_OPENAPI } from "../src/github/github-openapi.js";

describe("the GitHub stand-in's copy of GitHub's description", () => {
  it("is the installed @octokit/openapi's, reduced (run scripts/github-openapi.mjs after an upgrade)", () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve("@octokit/openapi/generated/api.github.com.json");
    const full = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    const header = readFileSync(
      new URL("../src/github/github-openapi.ts", import.meta.url),
      "utf8",
    );
    const version = (require("@octokit/openapi/package.json") as { version: string }).version;
    expect(header).toContain(`from @octokit/openapi ${version}:`);
    expect(JSON.parse(GITHUB_OPENAPI)).toEqual(JSON.parse(JSON.stringify(reduceDescription(full))));
  });
});
