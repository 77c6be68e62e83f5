import { describe, expect, it } from "vitest";
import { branchAllowed, checkConfigInvariants, namedBranches, parseConfig } from "../src/index.js";

describe("parseConfig", () => {
  it("fills every default and resolves paths relative to the config folder", () => {
    const r = parseConfig({ repos: { site: { path: "repos/site" } } }, { dir: "/srv/idem" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.journal.path).toBe("/srv/idem/.idem/journal.db");
    expect(r.config.repos.site?.path).toBe("/srv/idem/repos/site");
    expect(r.config.repos.site?.branch).toBe("main");
    expect(r.config.queue.maxDeliver).toBe(3);
    expect(r.config.interpreter.backoffMs).toEqual([1000, 5000, 30000]);
    expect(r.config.nats).toBeUndefined();
    expect(r.config.queue.pollMs).toBe(100);
    expect(r.config.console).toEqual({
      host: "127.0.0.1",
      port: 7071,
      readOnly: false,
      auditIntervalMs: 600_000,
    });
  });

  it("refuses a zero queue.pollMs and a console port out of range, naming each key", () => {
    const r = parseConfig({ queue: { pollMs: 0 }, console: { port: 70000 } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual(["console.port", "queue.pollMs"]);
  });

  it("refuses unknown keys and names them", () => {
    const r = parseConfig({ journal: { pth: "x" } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.path).toBe("journal");
    expect(r.issues[0]?.message).toMatch(/pth/);
  });

  it("takes branch patterns (a branch per job) in branches, and refuses a pattern that is not one", () => {
    const ok = parseConfig(
      { repos: { a: { url: "file:///srv/a.git", branches: ["idem/*", "pr-*", "release"] } } },
      { dir: "/" },
    );
    expect(ok.ok).toBe(true);
    if (!ok.ok) return;
    const repo = ok.config.repos.a as { branch: string; branches: string[] };
    expect(["main", "idem/job-1", "pr-7", "release"].map((b) => branchAllowed(repo, b))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(
      ["idem/", "idem", "pr-", "releases", "other/x"].map((b) => branchAllowed(repo, b)),
    ).toEqual([false, false, false, false, false]);
    expect(namedBranches(repo)).toEqual(["main", "release"]);
    for (const bad of ["*", "a*b*", "-x*", "a..*"]) {
      const r = parseConfig({ repos: { a: { path: "a", branches: [bad] } } }, { dir: "/" });
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.branches.0");
    }
    expect(parseConfig({ repos: { a: { path: "a", branch: "idem/*" } } }, { dir: "/" }).ok).toBe(
      false,
    );
  });

  it("refuses an option-like branch", () => {
    const r = parseConfig({ repos: { a: { path: "a", branch: "--upload-pack=x" } } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.branch");
  });

  it("takes a repo on a server by url, with a per-host mirror inside .idem by default", () => {
    const r = parseConfig(
      {
        repos: {
          site: { url: "ssh://git@example.com/org/site.git" },
          docs: { url: "../shared/docs.git", cacheDir: "/var/cache/idem/docs" },
        },
      },
      { dir: "/srv/idem" },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.repos.site?.url).toBe("ssh://git@example.com/org/site.git");
    expect(r.config.repos.site?.cacheDir).toBe("/srv/idem/.idem/mirrors/site.git");
    expect(r.config.repos.site?.path).toBe("/srv/idem/.idem/mirrors/site.git");
    expect(r.config.repos.docs?.url).toBe("/srv/shared/docs.git");
    expect(r.config.repos.docs?.path).toBe("/var/cache/idem/docs");
  });

  it("wants exactly one of path and url, and a cacheDir only beside a url", () => {
    const r = parseConfig(
      {
        repos: {
          both: { path: "a", url: "git://h/a.git" },
          none: { branch: "main" },
          odd: { path: "a", cacheDir: "c" },
        },
      },
      { dir: "/" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual([
      "repos.both",
      "repos.none",
      "repos.odd.cacheDir",
    ]);
  });

  it("refuses a url with a password and never repeats it", () => {
    const r = parseConfig(
      { repos: { a: { url: "https://bob:s3cret@example.com/a.git" } } },
      { dir: "/" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.path).toBe("repos.a.url");
    expect(r.issues[0]?.message).toMatch(/password/);
    expect(JSON.stringify(r.issues)).not.toContain("s3cret");
  });

  it("refuses an option-like url and an unknown scheme", () => {
    for (const url of ["--upload-pack=touch /tmp/x", "ftp://example.com/a.git", "https://"]) {
      const r = parseConfig({ repos: { a: { url } } }, { dir: "/" });
      expect(r.ok, url).toBe(false);
      if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.url");
    }
    for (const url of [
      "git@example.com:org/a.git",
      "file:///srv/a.git",
      "git://127.0.0.1:9418/a",
    ]) {
      expect(parseConfig({ repos: { a: { url } } }, { dir: "/" }).ok, url).toBe(true);
    }
  });

  it("turns NATS_URL into a nats section when the config has none", () => {
    const r = parseConfig({}, { dir: "/", natsUrl: "nats://127.0.0.1:4333" });
    expect(r.ok && r.config.nats?.url).toBe("nats://127.0.0.1:4333");
  });
});

describe("checkConfigInvariants", () => {
  it("accepts the defaults", () => {
    const r = parseConfig({ nats: {} }, { dir: "/" });
    expect(r.ok && checkConfigInvariants(r.config)).toEqual([]);
  });

  it("refuses a retention shorter than the redelivery horizon plus maxAge", () => {
    const r = parseConfig({ journal: { retentionDays: 7 }, nats: {} }, { dir: "/" });
    if (!r.ok) throw new Error("config should parse");
    expect(checkConfigInvariants(r.config).map((v) => v.key)).toEqual(["journal.retentionDays"]);
  });

  it("refuses a duplicate window that does not cover the publish retry or exceeds maxAge", () => {
    const short = parseConfig(
      { nats: { duplicateWindowMs: 1000, publishRetryMs: 5000 } },
      { dir: "/" },
    );
    const long = parseConfig(
      { nats: { duplicateWindowMs: 10_000, maxAgeMs: 5000, publishRetryMs: 1000 } },
      { dir: "/" },
    );
    if (!short.ok || !long.ok) throw new Error("config should parse");
    expect(checkConfigInvariants(short.config).map((v) => v.key)).toEqual([
      "nats.duplicateWindowMs",
    ]);
    expect(checkConfigInvariants(long.config).map((v) => v.key)).toEqual([
      "nats.duplicateWindowMs",
    ]);
  });
});
