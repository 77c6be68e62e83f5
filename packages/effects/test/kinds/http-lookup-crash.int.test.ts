// A real `idem interpreter --once` killed right after http.request's POST reached a ticket service
// (IDEM_FAULT=interpreter.after-apply: the ticket exists, the ledger does not know it): the next
// interpreter asks the service by the key it keeps as an external id, records the effect present
// and posts nothing. Without the lookup the same crash leaves the effect uncertain.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAULT_POINTS } from "@idem/schema";
import { beforeAll, describe, expect, it } from "vitest";
import { buildCli, idem, type Shown } from "./idem-cli.js";
import { startTicketService } from "./ticket-service.js";

beforeAll(buildCli, 300_000);

async function crashAfterPost(lookup: Record<string, unknown> | undefined) {
  await using svc = await startTicketService();
  const dir = mkdtempSync(join(tmpdir(), "idem-http-crash-"));
  try {
    const config = {
      journal: { path: ".idem/journal.db" },
      interpreter: { leaseMs: 1000, backoffMs: [50, 100], pollMs: 20 },
      http: { targets: { tickets: { baseUrl: `${svc.url}/api`, ...(lookup ? { lookup } : {}) } } },
    };
    writeFileSync(join(dir, "idem.config.json"), JSON.stringify(config, null, 2));
    const output = {
      jobId: "incident-7",
      agent: "triage",
      effects: [
        {
          kind: "http.request",
          target: "tickets",
          method: "POST",
          path: "/tickets",
          body: { ticket: { title: "Printer on fire" } },
        },
      ],
    };
    writeFileSync(join(dir, "output.json"), JSON.stringify(output));
    expect((await idem(dir, ["init", "--journal"])).code).toBe(0);
    expect((await idem(dir, ["submit", "output.json"])).code).toBe(0);
    const killed = await idem(dir, ["interpreter", "--once"], {
      IDEM_FAULT: FAULT_POINTS.INTERPRETER_AFTER_APPLY,
    });
    expect(killed.signal, killed.stderr).toBe("SIGKILL");
    expect(svc.creates()).toBe(1);
    const fresh = await idem(dir, ["interpreter", "--once", "--json"]);
    const shown = JSON.parse((await idem(dir, ["show", "incident-7", "--json"])).stdout) as Shown;
    return { svc: { creates: svc.creates(), tickets: [...svc.tickets] }, fresh, shown };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("http.request on a target with a lookup, under SIGKILL", () => {
  it("finds the ticket its killed predecessor posted and does not post again", async () => {
    const { svc, fresh, shown } = await crashAfterPost({
      path: "/tickets/search?external_id={key}",
      match: "/tickets",
      field: "/external_id",
      keyField: "/ticket/external_id",
    });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(svc.creates).toBe(1);
    expect(svc.tickets).toEqual([{ id: 1, title: "Printer on fire", external_id: "incident-7/0" }]);
    expect(shown.runs.at(-1)?.state).toBe("done");
    expect(shown.effects).toMatchObject([{ key: "incident-7/0", state: "present" }]);
  });

  it("without it, leaves the effect uncertain for a person (the window docs/kinds/http.md states)", async () => {
    const { svc, fresh, shown } = await crashAfterPost(undefined);
    expect(fresh.code).toBe(1);
    expect(svc.creates).toBe(1);
    expect(shown.effects).toMatchObject([{ key: "incident-7/0", state: "uncertain" }]);
  });
});

describe("a lookup that never sends the key", () => {
  it("stops the config at load with exit 2 naming the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "idem-http-nokey-"));
    try {
      const lookup = { path: "/tickets/search?external_id={key}", match: "/tickets" };
      const config = {
        journal: { path: ".idem/journal.db" },
        http: { targets: { tickets: { baseUrl: "http://127.0.0.1:9/api", lookup } } },
      };
      writeFileSync(join(dir, "idem.config.json"), JSON.stringify(config));
      const ran = await idem(dir, ["init", "--journal"]);
      expect(ran.code, ran.stderr).toBe(2);
      expect(ran.stderr).toContain("http.targets.tickets.lookup.keyField");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
