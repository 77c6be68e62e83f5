// What Slack's `ok: false` answers become: its codes are shown and classified; any other bytes in
// their place (a target that echoes the token it was sent) are neither shown nor stored.
import { isIdemError } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { slackFailure } from "../../src/clients/slack/slack-client.js";

describe("a Slack error code", () => {
  it("is shown and classified when it is Slack's, and never shown when it is not a code", () => {
    const known = slackFailure("channel_not_found", "chat.postMessage");
    expect(isIdemError(known, "INVALID_CONFIG")).toBe(true);
    expect(known.message).toContain("channel_not_found");
    const echoed = slackFailure("xoxb-1234-5678-s3cr3tT0ken", "chat.postMessage");
    expect(echoed.message).not.toMatch(/xoxb|s3cr3t/);
    expect(JSON.stringify(echoed.details)).not.toMatch(/xoxb|s3cr3t/);
    expect(echoed.message).toContain("not Slack's");
    expect(slackFailure(undefined, "chat.postMessage").message).toContain("without a code");
  });
});
