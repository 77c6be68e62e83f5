#!/usr/bin/env node
// An agent written with @idem/client: it submits its output, loses the answer to a (forced)
// timeout, so the client retries and hears "duplicate" (first write wins), then reads it back.
//   IDEM_URL (default http://127.0.0.1:7070), IDEM_TOKEN (when api.token is set); node agent.mjs [jobId]
import { createClient, fileWrite } from "@idem/client";

const jobId = process.argv[2] ?? "client-report-1";
let lost = false; // a fetch that drops its first answer after the server has handled the request
const flakyFetch = async (url, init) => {
  const res = await fetch(url, init);
  if (lost) return res;
  lost = true;
  throw new DOMException("the answer was lost", "TimeoutError");
};
const idem = createClient({
  baseUrl: process.env.IDEM_URL ?? "http://127.0.0.1:7070",
  token: process.env.IDEM_TOKEN,
  fetch: flakyFetch,
});
const effects = [
  fileWrite({ root: "outbox", path: `reports/${jobId}.txt`, content: "all good\n" }),
];
const submitted = await idem.submit({ jobId, agent: "reporter", summary: "a report", effects });
console.log(JSON.stringify({ step: "submit", ...submitted })); // { status: "duplicate" } on the retry
if (submitted.status !== "recorded" && submitted.status !== "duplicate") process.exit(1);
const record = await idem.get(jobId);
console.log(JSON.stringify({ step: "get", jobId, summary: record?.output.summary }));
