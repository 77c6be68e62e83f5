// What a session takes from its client, bounded: the message size (scaled from
// limits.maxOutputBytes, as HTTP's 413 and stdio's refusal use it) and the self-reported client
// name kept in an actor (printable, at most 64 characters).
import { clientNameOf, maxMessageBytes } from "@idem/mcp";
import { parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";

const configWith = (maxOutputBytes: number) => {
  const r = parseConfig({ limits: { maxOutputBytes } }, { dir: "/tmp" });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
};

describe("a session's bounds", () => {
  it("takes messages of twice limits.maxOutputBytes, never fewer than 4 MiB", () => {
    expect(maxMessageBytes(configWith(1_048_576))).toBe(4 * 1_048_576);
    expect(maxMessageBytes(configWith(8 * 1_048_576))).toBe(16 * 1_048_576);
  });

  it("keeps a client's name printable and at most 64 characters", () => {
    expect(clientNameOf("claude-code")).toBe("claude-code");
    expect(clientNameOf("evil\u001b[31m\nname\u202e")).toBe("evil[31mname");
    expect(clientNameOf("x".repeat(10_000))).toHaveLength(64);
    expect(clientNameOf("\u0007\u0000")).toBeUndefined();
    expect(clientNameOf(undefined)).toBeUndefined();
  });
});
