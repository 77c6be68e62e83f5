import { describe, expect, it } from "vitest";
import { checkConfigInvariants, parseConfig } from "../src/index.js";

describe("parseConfig", () => {
  it("fills every default and resolves paths relative to the config folder", () => {
    const r = parseConfig({ journal: { archiveDir: "old" } }, { dir: "/srv/idem" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.config.journal.path).toBe("/srv/idem/.idem/journal.db");
    expect(r.config.journal.archiveDir).toBe("/srv/idem/old");
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

  it("keeps the effect kinds' sections as written, refusing those no kind owns when told which", () => {
    const raw = { repos: { site: { path: "repos/site" } }, widgets: { a: 1 } };
    const kept = parseConfig(raw, { dir: "/srv/idem" });
    expect(kept.ok && kept.config.sections).toEqual(raw);
    const told = parseConfig(raw, { dir: "/srv/idem", sections: ["repos"] });
    expect(told.ok).toBe(false);
    if (told.ok) return;
    expect(told.issues).toEqual([{ path: "", message: 'Unrecognized key: "widgets"' }]);
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
