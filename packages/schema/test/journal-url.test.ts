import { describe, expect, it } from "vitest";
import { type Config, journalLocationOf, parseConfig } from "../src/index.js";

const secret = "s3cr3t-pw";

describe("journal.url and IDEM_JOURNAL_URL", () => {
  it("selects PostgreSQL by journal.url, keeping journal.path's default beside it", () => {
    const r = parseConfig({ journal: { url: "postgresql://idem@db:5432/idem" } }, { dir: "/w" });
    expect(r.ok && r.config.journal).toMatchObject({
      url: "postgresql://idem@db:5432/idem",
      path: "/w/.idem/journal.db",
    });
    const none = parseConfig({}, { dir: "/w" });
    expect(none.ok && none.config.journal.url).toBeNull();
  });

  it("refuses a URL of another scheme naming journal.url, never repeating its password", () => {
    const r = parseConfig({ journal: { url: `mysql://u:${secret}@db/x` } }, { dir: "/w" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path)).toEqual(["journal.url"]);
    expect(JSON.stringify(r.issues)).not.toContain(secret);
  });

  it("lets IDEM_JOURNAL_URL override the file, and names the variable when it is invalid", () => {
    const file = { journal: { url: "postgres://a@one/idem" } };
    const r = parseConfig(file, { dir: "/w", journalUrl: "postgres://b@two/idem" });
    expect(r.ok && r.config.journal.url).toBe("postgres://b@two/idem");
    const bad = parseConfig(file, { dir: "/w", journalUrl: `http://u:${secret}@x` });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    expect(bad.issues.map((i) => i.path)).toEqual(["IDEM_JOURNAL_URL"]);
    expect(JSON.stringify(bad.issues)).not.toContain(secret);
  });

  it("gives one location per config: the URL when one is set (the variable's first), else the absolute file", () => {
    const load = (raw: unknown, journalUrl?: string): Config => {
      const r = parseConfig(raw, { dir: "/w", journalUrl });
      if (!r.ok) throw new Error(JSON.stringify(r.issues));
      return r.config;
    };
    expect(journalLocationOf(load({}))).toEqual({ path: "/w/.idem/journal.db" });
    expect(journalLocationOf(load({ journal: { path: "j/x.db" } }))).toEqual({ path: "/w/j/x.db" });
    const file = { journal: { path: "j/x.db", url: "postgres://a@one/idem" } };
    expect(journalLocationOf(load(file))).toEqual({ url: "postgres://a@one/idem" });
    expect(journalLocationOf(load(file, "postgres://b@two/idem"))).toEqual({
      url: "postgres://b@two/idem",
    });
    expect(journalLocationOf(load({}, "postgres://b@two/idem"))).toEqual({
      url: "postgres://b@two/idem",
    });
  });
});
