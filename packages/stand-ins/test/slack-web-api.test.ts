import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { describeSlackMethods, SERVED } from "../scripts/slack-web-api.mjs";
import { METHODS } from "../src/slack/slack-methods.js";
import { SLACK_WEB_API } from "../src/slack/slack-web-api.js";

describe("the Slack stand-in's description", () => {
  it("is what the installed @slack/web-api's types say (run scripts/slack-web-api.mjs after an upgrade)", () => {
    const version = createRequire(import.meta.url)("@slack/web-api/package.json").version;
    expect(SLACK_WEB_API.version).toBe(version);
    expect(JSON.parse(JSON.stringify(SLACK_WEB_API))).toEqual(describeSlackMethods());
  });

  it("serves every method it describes, with the arguments the SDK sends", () => {
    expect(Object.keys(METHODS).sort()).toEqual([...SERVED].sort());
    expect(METHODS["chat.postMessage"]?.args.channel).toEqual({ type: "string", required: true });
    expect(METHODS["conversations.history"]?.args.include_all_metadata).toEqual({
      type: "boolean",
    });
    expect(METHODS["conversations.history"]?.args.oldest).toEqual({ type: "ts" });
  });
});
