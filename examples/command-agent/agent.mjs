#!/usr/bin/env node
// A command agent for idem, with no dependency beyond Node: the executor runs it without a shell,
// writes one Job as JSON to its stdin, and reads one AgentOutput as JSON from its stdout.
//
//   Job in:     { "jobId": "note-1", "agent": "writer", "input": { "title": "...", "text": "..." } }
//   Output out: { "summary": "...", "effects": [ { "kind": "file.write", "root": "outbox", ... } ] }
//
// stdout carries the output and nothing else; anything for people goes to stderr (the executor
// logs it line by line). Exit 0 with the output; any other exit code fails this delivery, which
// the executor retries after queue.backoffMs and dead-letters after queue.maxDeliver.

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

const job = JSON.parse(await readStdin());
const { title, text } = job.input ?? {};
if (typeof title !== "string" || typeof text !== "string") {
  console.error(`job ${job.jobId}: input needs a string "title" and a string "text"`);
  process.exit(1);
}
// The executor also sets IDEM_JOB_ID; it is the same as job.jobId.
console.error(`writing note for job ${process.env.IDEM_JOB_ID ?? job.jobId}`);

const output = {
  // jobId and agent may be left out: the executor fills them in from the job (if given, they must
  // match it).
  summary: `a note titled ${JSON.stringify(title)}`,
  effects: [
    {
      kind: "file.write",
      // An alias from the config's "roots", never a path: the interpreter writes under it.
      root: "outbox",
      path: `notes/${job.jobId}.md`,
      content: `# ${title}\n\n${text}\n`,
    },
  ],
  meta: { words: text.split(/\s+/).filter(Boolean).length },
};
process.stdout.write(`${JSON.stringify(output)}\n`);
