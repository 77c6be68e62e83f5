// The unprobeable paths of the decision against a real nats-server: nats.publish is sent once, skipped
// by a replay, and re-sent only with --force-unprobeable, where the stream's dedup absorbs it.
import { openEffects } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { startNatsServer, tempDir } from "@idem/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createWorkspace, openWorkspaceJournal, recordAll } from "../chaos/interpreter-fixture.js";

describe("interpreter with nats.publish", () => {
  it("sends once, skips on replay, and a forced re-send is absorbed by the stream", async () => {
    await using nats = await startNatsServer();
    await using dir = await tempDir("idem-interp-nats-");
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({
        name: "EVENTS",
        subjects: ["events.>"],
        duplicate_window: 60_000_000_000,
      });
      const ws = await createWorkspace(
        dir.path,
        {},
        { publish: { events: { subjectPrefix: "events", stream: "EVENTS", url: nats.url } } },
      );
      const journal = await openWorkspaceJournal(ws);
      const effects = openEffects(ws.config);
      try {
        await recordAll(journal, ws.config, [
          {
            jobId: "announce",
            agent: "writer",
            effects: [
              { kind: "nats.publish", target: "events", subject: "done", data: { ok: true } },
              { kind: "file.write", root: "outbox", path: "announce.txt", content: "sent\n" },
            ],
          },
        ]);
        const interp = createInterpreter({
          config: ws.config,
          journal,
          effects,
          logger: pino({ level: "silent" }),
        });
        const messages = async () => (await jsm.streams.info("EVENTS")).state.messages;

        expect((await interp.drain()).runs.done).toBe(1);
        expect(await messages()).toBe(1);
        expect((await journal.ledger.forJob("announce", 1))[0]?.state).toBe("applied");

        await journal.runs.replay({ jobIds: ["announce"] }, { actor: "test" });
        expect((await interp.drain()).runs.done).toBe(1);
        const g2 = await journal.ledger.forJob("announce", 2);
        expect(g2.map((e) => e.state)).toEqual(["skipped", "present"]);
        expect(await messages()).toBe(1);

        await journal.runs.replay(
          { jobIds: ["announce"] },
          { actor: "test", forceUnprobeable: true },
        );
        expect((await interp.drain()).runs.done).toBe(1);
        const g3 = await journal.ledger.forJob("announce", 3);
        expect(g3[0]?.state).toBe("applied");
        expect(g3[0]?.detail?.duplicate).toBe(true);
        expect(await messages()).toBe(1);
      } finally {
        await effects.close();
        await journal.close();
      }
    } finally {
      await nc.close();
    }
  });
});
