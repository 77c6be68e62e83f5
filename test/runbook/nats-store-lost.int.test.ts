import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { closeNats, connectNats } from "@idem/nats";
import { type NatsServerHandle, startNatsServer } from "@idem/testing";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { buildForTest } from "../chaos/interpreter-fixture.js";
import { type Incident, incident } from "./incident.js";
import { shell, typed } from "./runbook.js";

// docs/runbook.md, "NATS is down": the server killed and started again with its store deleted. The
// publish target's own stream is gone with it; doctor names it, the next nats.publish makes it
// again, and the effect lands once.

let fx: Incident | undefined;
let nats: NatsServerHandle | undefined;
beforeAll(() => buildForTest("apps/cli"));
afterEach(async () => {
  await fx?.close();
  await nats?.stop();
  fx = undefined;
  nats = undefined;
});

async function streamMessages(url: string, stream: string): Promise<number | undefined> {
  const nc = await connectNats(url, "runbook-test");
  try {
    const reply = await nc.request(`$JS.API.STREAM.INFO.${stream}`, "", { timeout: 5_000 });
    const answer = reply.json<{ error?: unknown; state?: { messages: number } }>();
    return answer.error ? undefined : answer.state?.messages;
  } finally {
    await closeNats(nc);
  }
}

const publish = (jobId: string) => ({
  jobId,
  agent: "writer",
  effects: [{ kind: "nats.publish" as const, target: "events", subject: "done", data: { jobId } }],
});

describe("a NATS store lost, the runbook's way", () => {
  it("makes the publish target's stream again on the next publish; doctor names it until then", async () => {
    nats = await startNatsServer();
    fx = await incident(
      {},
      { publish: { events: { subjectPrefix: "events", stream: "EVENTS", url: nats.url } } },
    );
    const cwd = fx.dir;
    // The owner made the stream; it is there before the loss.
    const nc = await connectNats(nats.url, "owner");
    await nc.request(
      "$JS.API.STREAM.CREATE.EVENTS",
      JSON.stringify({ name: "EVENTS", subjects: ["events.>"], storage: "file" }),
      { timeout: 5_000 },
    );
    await closeNats(nc);
    await fx.record([publish("before")]);
    expect(await fx.start(["interpreter", "--once"]).exited).toBe(0);
    expect(await streamMessages(nats.url, "EVENTS")).toBe(1);

    // The server dies and comes back with an empty store.
    await nats.kill("SIGKILL");
    for (const f of readdirSync(nats.storeDir)) rmSync(join(nats.storeDir, f), { recursive: true });
    await nats.restart();
    expect(await streamMessages(nats.url, "EVENTS")).toBeUndefined();
    const doctor = await shell(typed("NATS is down", /^idem doctor\b/), { cwd });
    expect(doctor.stdout).toContain("EVENTS");

    await fx.record([publish("after")]);
    expect(await fx.start(["interpreter", "--once"]).exited).toBe(0);
    expect(await streamMessages(nats.url, "EVENTS")).toBe(1);
    const j = await fx.journal();
    expect((await j.runs.latest("after"))?.state).toBe("done");
    const again = await shell(typed("NATS is down", /^idem doctor\b/), { cwd });
    expect(again.stdout).not.toMatch(/EVENTS.*missing/);
    const audit = await shell("idem audit", { cwd });
    expect(audit.code, audit.stdout).toBe(0);
  });
});
