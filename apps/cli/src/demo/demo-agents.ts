/**
 * The demo's fleet: three small agents that follow the agent command protocol (the Job as JSON on
 * stdin, one AgentOutput as JSON on stdout). `idem demo` writes them into its workspace.
 */
export const DEMO_AGENTS: Record<string, string> = {
  writer: `// writer: one commit with a new note per job.
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
const { topic, n } = job.input;
process.stdout.write(JSON.stringify({
  summary: \`a note on \${topic}\`,
  effects: [{
    kind: "git.commit", repo: "site", message: \`notes: \${topic} (#\${n})\`,
    files: [{ path: \`notes/\${job.jobId}.md\`, content: \`# \${topic}\\n\\nNote \${n}, by the writer agent.\\n\` }],
  }],
}));
`,
  reviewer: `// reviewer: a review committed to the repo and a verdict file in the outbox.
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
const { topic, n } = job.input;
const verdict = n % 4 === 0 ? "needs work" : "approved";
process.stdout.write(JSON.stringify({
  summary: \`\${verdict}: \${topic}\`,
  effects: [
    { kind: "git.commit", repo: "site", message: \`review: \${topic} (#\${n})\`,
      files: [{ path: \`reviews/\${job.jobId}.md\`, content: \`\${topic}: \${verdict}\\n\` }] },
    { kind: "file.write", root: "outbox", path: \`verdicts/\${job.jobId}.json\`,
      content: JSON.stringify({ jobId: job.jobId, topic, verdict }) + "\\n" },
  ],
}));
`,
  reporter: `// reporter: a report in the repo, and the outbox's status.md, which every report overwrites
// (a later recorded write supersedes an earlier one: a replay never rolls it back).
import { readFileSync } from "node:fs";
const job = JSON.parse(readFileSync(0, "utf8"));
const { topic, n } = job.input;
process.stdout.write(JSON.stringify({
  summary: \`report #\${n}\`,
  effects: [
    { kind: "git.commit", repo: "site", message: \`report #\${n}: \${topic}\`,
      files: [{ path: \`reports/\${job.jobId}.md\`, content: \`Report \${n} on \${topic}.\\n\` }] },
    { kind: "file.write", root: "outbox", path: "status.md",
      content: \`last report: #\${n} (\${job.jobId}) on \${topic}\\n\` },
  ],
}));
`,
};

export const DEMO_TOPICS = [
  "retries",
  "leases",
  "probes",
  "generations",
  "dead letters",
  "redelivery",
  "effect keys",
  "backups",
  "audits",
  "replays",
];
