import { describe, expect, it } from "vitest";
import {
  describeError,
  parseConfig,
  redactSecret,
  redactUrl,
  urlHasCredentials,
} from "../src/index.js";

describe("redactUrl", () => {
  it("hides user info and query values of a URL, keeping where it points", () => {
    expect(redactUrl("https://user:s3cret@collector:4318/v1/traces?key=s3cret#top")).toBe(
      "https://***@collector:4318/v1/traces?key=***#top",
    );
    // A user name alone is often the secret (a token as user name).
    expect(redactUrl("https://ghp_T0KEN@github.com/o/r.git")).toBe(
      "https://***@github.com/o/r.git",
    );
    expect(redactUrl("nats://T0KEN@nats:4222")).toBe("nats://***@nats:4222");
    expect(redactUrl("https://T0KEN:x-oauth-basic@github.com/o/r")).toBe(
      "https://***@github.com/o/r",
    );
    // PostgreSQL's user is a role name: kept, its password not. An @ inside the password:
    // everything up to the last @ before the host is user info.
    expect(redactUrl("postgres://idem:p@ss@db:5432/idem?sslmode=require&password=x")).toBe(
      "postgres://idem:***@db:5432/idem?sslmode=***&password=***",
    );
    expect(redactUrl("postgresql://postgres@127.0.0.1:5432/idem")).toBe(
      "postgresql://postgres@127.0.0.1:5432/idem",
    );
  });

  it("redacts every URL inside free text and keeps JSON valid", () => {
    const line = JSON.stringify({
      err: "cannot reach nats://u:p4ss@a:4222, nats://t0k@b:4222 (ECONNREFUSED)",
      url: "http://h/x?a=1&b=&c",
    });
    const out = redactUrl(line);
    expect(out).not.toMatch(/p4ss|t0k|a=1/);
    expect(JSON.parse(out)).toEqual({
      err: "cannot reach nats://***@a:4222, nats://***@b:4222 (ECONNREFUSED)",
      url: "http://h/x?a=***&b=&c",
    });
  });

  it("leaves text without a URL as it is, and is idempotent", () => {
    for (const s of ["no url, mail a@b.example", "git@host:repo.git", "", "nonsense://"])
      expect(redactUrl(s)).toBe(s);
    const once = redactUrl("https://u:p@h/?k=v");
    expect(redactUrl(once)).toBe(once);
  });

  it("is what describeError answers for an error naming a URL", () => {
    const e = Object.assign(new Error("connect ECONNREFUSED postgres://idem:hunter2@db/idem"), {
      code: "ECONNREFUSED",
    });
    expect(describeError(e)).toBe("connect ECONNREFUSED postgres://idem:***@db/idem");
    expect(describeError("fetch https://a:b@h/ failed")).toBe("fetch https://***@h/ failed");
  });

  it("tells whether a URL carries credentials", () => {
    expect(urlHasCredentials("https://u:p@h/")).toBe(true);
    expect(urlHasCredentials("https://tok@h/")).toBe(true);
    expect(urlHasCredentials("https://h/?token=x")).toBe(false);
    expect(urlHasCredentials("not a url")).toBe(false);
  });
});

describe("config URLs with credentials", () => {
  it("refuses them where fetch can never send them, naming the key and never the secret", () => {
    // The http targets' URLs are http.request's (packages/effects/test/kind-sections.test.ts).
    const r = parseConfig(
      { alerts: { webhook: "https://alert:Sup3rSecret@alerts.example/hook" } },
      { dir: "/" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual(["alerts.webhook"]);
    expect(JSON.stringify(r.issues)).not.toContain("Sup3rSecret");
  });

  it("keeps them where they work (PostgreSQL, NATS, OTLP): they are only redacted in what is shown", () => {
    const r = parseConfig(
      {
        journal: { url: "postgres://idem:pw@db/idem" },
        nats: { url: "nats://user:pw@nats:4222" },
        publish: { ev: { subjectPrefix: "ev", stream: "EV", url: "nats://tok@other:4222" } },
        telemetry: { otlpUrl: "https://u:pw@collector:4318" },
      },
      { dir: "/" },
    );
    expect(r.ok).toBe(true);
  });
});

describe("redactSecret", () => {
  it("hides every occurrence of each secret, the longer first, and skips absent or empty ones", () => {
    const text = "auth s3cr3t-token failed; retried with s3cr3t-token; s3cr3t alone";
    expect(redactSecret(text, ["s3cr3t", "s3cr3t-token", undefined, ""])).toBe(
      "auth *** failed; retried with ***; *** alone",
    );
    expect(redactSecret(text, "s3cr3t-token")).toBe(
      "auth *** failed; retried with ***; s3cr3t alone",
    );
    expect(redactSecret(text, undefined)).toBe(text);
    expect(redactSecret(text, "")).toBe(text);
  });
});
