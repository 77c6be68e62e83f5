#!/usr/bin/env node
// An orchestrator written with @idem/client: it enqueues a job straight onto idem's jobs stream
// with a JetStream client it made itself (Nats-Msg-Id = job ID), then enqueues it again, as a
// retry after a lost answer would: the stream stores it once and answers duplicate.
//   NATS_URL (default nats://127.0.0.1:4222), IDEM_SUBJECT_PREFIX (nats.subjectPrefix, default idem);
//   node enqueue.mjs [jobId]
import { createClient } from "@idem/client";
import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";

const jobId = process.argv[2] ?? "client-job-1";
const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
try {
  const idem = createClient({
    jetstream: jetstream(nc),
    subjectPrefix: process.env.IDEM_SUBJECT_PREFIX ?? "idem",
  });
  const job = { jobId, agent: "writer", input: { title: "Hello from an orchestrator" } };
  const first = await idem.enqueue(job);
  console.log(JSON.stringify({ step: "enqueue", ...first })); // duplicate: false
  const again = await idem.enqueue(job);
  console.log(JSON.stringify({ step: "enqueue again", ...again })); // duplicate: true, same seq
} finally {
  await nc.drain();
}
