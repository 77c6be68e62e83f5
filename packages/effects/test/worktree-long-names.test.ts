// Found by the end-to-end fuzz suite (issue 31): a file name of 255 bytes is one git and the file
// system take, and validation lets through, but the in-process sync of a checked-out branch wrote
// it under `.<name>.idem-<nonce>` first: ENAMETOOLONG, the effect dead as a logic error.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempName } from "../../git/src/plumbing/prepared-sync.js";
import { createEffects, type Effects } from "../src/index.js";
import { addRepo, clock, git, type Sandbox, sandbox } from "./helpers.js";

let sb: Sandbox | undefined;
let fx: Effects | undefined;
afterEach(async () => {
  await fx?.close();
  sb?.cleanup();
});

describe("a checked-out branch and a file name of 255 bytes", () => {
  it("gets the file in its working tree, and the index in step", async () => {
    sb = sandbox();
    const repo = addRepo(sb);
    fx = createEffects(sb.config, { clock: clock() });
    const name = `d/${"\u00e9".repeat(127)}x`;
    expect(Buffer.byteLength(name.slice(2))).toBe(255);
    const spec = {
      kind: "git.commit" as const,
      repo: "site",
      message: "long",
      files: [{ path: name, content: "long\n" }],
    };
    const probed = await fx.probe(spec, "long-1/0");
    await fx.apply(spec, "long-1/0", { probed: probed });
    expect(readFileSync(join(repo, name), "utf8")).toBe("long\n");
    expect(git(repo, "status", "--porcelain")).toBe("");
  });

  it("names the temporary file as before when it fits, by a hash of the name when it does not", () => {
    expect(tempName("/w/a/b.txt", "0123456789ab")).toBe("/w/a/.b.txt.idem-0123456789ab");
    const long = tempName(`/w/a/${"s".repeat(255)}`, "0123456789ab");
    expect(long).toMatch(/^\/w\/a\/\.[0-9a-f]{16}\.idem-0123456789ab$/);
    expect(tempName(`/w/a/${"t".repeat(255)}`, "0123456789ab")).not.toBe(long);
  });
});
