#!/usr/bin/env node
// An agent that runs outside the executor and hands its output to idem over HTTP, with nothing but
// Node's fetch. It posts one AgentOutput to POST /v1/outputs, posts it again to show that a retry
// is harmless (a "duplicate"), and reads the recorded output back with GET /v1/outputs/:jobId.
//
//   IDEM_URL    the executor's HTTP API (default http://127.0.0.1:7070, api.host:api.port)
//   IDEM_TOKEN  the bearer token, when the config sets api.token
//   node submit.mjs [jobId]
//
// Prints one JSON line per step on stdout; exits 1 if the output is refused (invalid or conflict).

const base = (process.env.IDEM_URL ?? "http://127.0.0.1:7070").replace(/\/+$/, "");
const jobId = process.argv[2] ?? `report-${new Date().toISOString().slice(0, 10)}`;
const headers = { "content-type": "application/json" };
if (process.env.IDEM_TOKEN) headers.authorization = `Bearer ${process.env.IDEM_TOKEN}`;

// Submitted from elsewhere, the output names its job and agent itself. Any well-formed agent name
// is accepted here; only the executor needs agents.<name> to run one.
const output = {
  jobId,
  agent: "reporter",
  summary: "a daily report, written outside the executor",
  effects: [
    {
      kind: "file.write",
      root: "outbox",
      path: `reports/${jobId}.txt`,
      content: `report ${jobId}: all good\n`,
    },
  ],
};

async function submit() {
  const res = await fetch(`${base}/v1/outputs`, {
    method: "POST",
    headers,
    body: JSON.stringify(output),
  });
  // 201 recorded, 200 duplicate, 409 conflict, 400 invalid (with issues), 401, 413.
  const body = await res.json();
  console.log(JSON.stringify({ step: "submit", httpStatus: res.status, ...body }));
  if (res.status === 400) {
    for (const issue of body.issues ?? []) console.error(`  ${issue.path}: ${issue.message}`);
  }
  return res.status;
}

const first = await submit();
if (first !== 201 && first !== 200) process.exit(1);
// A retry after a lost answer is safe: the same content again is a duplicate (200), never a
// second record.
const second = await submit();
if (second !== 200) process.exit(1);

const res = await fetch(`${base}/v1/outputs/${encodeURIComponent(jobId)}`, { headers });
const record = await res.json();
console.log(JSON.stringify({ step: "read", httpStatus: res.status, record }));
if (res.status !== 200) process.exit(1);
