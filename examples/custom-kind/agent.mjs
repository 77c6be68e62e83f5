#!/usr/bin/env node
// A command agent whose output asks for an effect of the operator's own kind, acme.ticket
// (kinds/ticket.mjs): the Job on stdin, one AgentOutput on stdout, as in ../command-agent.
//
//   Job in:     { "jobId": "ticket-1", "agent": "ticketer", "input": { "title": "...", "body": "..." } }
//   Output out: { "effects": [ { "kind": "acme.ticket", "queue": "support", "title": "...", ... } ] }

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const job = JSON.parse(await readStdin());
const { title, body, queue = "support" } = job.input ?? {};
if (typeof title !== "string") {
  console.error(`job ${job.jobId}: input needs a string "title"`);
  process.exit(1);
}
const output = {
  summary: `a ticket titled ${JSON.stringify(title)}`,
  // The agent names the queue; where the service is and its token are the operator's (the
  // config's kinds["acme.ticket"].options and an environment variable), never the agent's.
  effects: [{ kind: "acme.ticket", queue, title, body: typeof body === "string" ? body : "" }],
};
process.stdout.write(`${JSON.stringify(output)}\n`);
