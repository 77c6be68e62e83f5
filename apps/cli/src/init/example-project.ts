// `idem init --example`: a runnable project in one command, as `npx @restatedev/create-app` and
// `npx @dbos-inc/create` give one: a command agent, a git repository and a folder it writes to, a
// job, the config naming them, and a README that walks through it with what you should see.
// test/examples/init-example.test.ts (the built CLI) and test/install/packed-cli.test.ts (the
// packed one) follow that README word for word from an empty folder.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CliError, EXIT } from "../context.js";

/** The agent: reads the Job on stdin, prints one AgentOutput on stdout, logs on stderr. */
const AGENT = `// A command agent (idem's agent protocol): the Job arrives as JSON on stdin; print one
// AgentOutput as JSON on stdout and exit 0. Logs go to stderr, which idem logs. The agent never
// acts itself: it asks for effects, and idem records them, then applies each exactly once.
import { readFileSync } from "node:fs";

const job = JSON.parse(readFileSync(0, "utf8"));
const { title, text } = job.input ?? {};
if (typeof title !== "string" || typeof text !== "string") {
  console.error("the job's input needs a title and a text");
  process.exit(1); // a failed delivery: retried, then dead-lettered (idem dlq ls)
}
console.error(\`writing a note titled "\${title}"\`);
process.stdout.write(
  JSON.stringify({
    summary: \`a note titled "\${title}"\`,
    effects: [
      {
        kind: "git.commit",
        repo: "notes",
        message: \`note: \${title}\`,
        files: [{ path: \`notes/\${job.jobId}.md\`, content: \`# \${title}\\n\\n\${text}\\n\` }],
      },
      { kind: "file.write", root: "outbox", path: \`\${job.jobId}.txt\`, content: \`\${text}\\n\` },
    ],
  }),
);
`;

const JOB = {
  jobId: "hello-1",
  agent: "writer",
  input: { title: "Hello from idem", text: "Written once, however often it runs." },
};

/** The README: the steps, each with what you should see. */
const README = `# An idem project

\`idem init --example\` made this folder: a command agent (\`agent.mjs\`), a git repository it
commits to (\`repos/notes\`), a folder it writes to (\`outbox/\`), a job (\`job.json\`) and the
config that names them (\`idem.config.json\`, with an empty journal in \`.idem/\`).

The agent never acts on its own: it answers each job with an output that asks for two effects, a
commit and a file. idem records that output first, then applies each effect exactly once in
effect, probing the target before it writes, whatever crashes or runs twice.

## Run it

In this folder, start the executor (it runs the agent) and the interpreter (it applies the
effects); Ctrl-C stops both:

<!-- idem:background -->
\`\`\`sh
idem up
\`\`\`

In a second terminal, in this folder, hand the agent the job:

<!-- idem:run -->
\`\`\`sh
idem enqueue job.json
\`\`\`

You should see:

<!-- idem:expect -->
\`\`\`text
enqueued hello-1 (embedded seq 1)
\`\`\`

The first terminal logs the agent's line (\`hello-1: writer stderr: writing a note titled "Hello
from idem"\`), the output recorded, then the run claimed, each effect settled and the run ended.
A second later, the output and what became of it:

<!-- idem:run -->
\`\`\`sh
idem show hello-1
\`\`\`

You should see (times, hashes and process IDs differ):

<!-- idem:expect -->
\`\`\`text
job hello-1  agent writer  source executor  recorded …
summary: a note titled "Hello from idem"
│ 1   │ done  │
│ hello-1/0 │ 1   │ git.commit │ applied │
│ hello-1/1 │ 1   │ file.write │ applied │
\`\`\`

The effects, at their targets:

<!-- idem:run -->
\`\`\`sh
git -C repos/notes log --format=%s
cat outbox/hello-1.txt
\`\`\`

You should see:

<!-- idem:expect -->
\`\`\`text
note: Hello from idem
start
Written once, however often it runs.
\`\`\`

## Run it again

The same job again is a duplicate: nothing is enqueued, the agent does not run, nothing is
committed twice.

<!-- idem:run -->
\`\`\`sh
idem enqueue job.json
\`\`\`

You should see:

<!-- idem:expect -->
\`\`\`text
duplicate hello-1: already enqueued (embedded seq 1), nothing new
\`\`\`

A replay interprets the recorded output again without running the agent. Its dry run probes each
effect at its target first and says what it would do:

<!-- idem:run -->
\`\`\`sh
idem replay --job hello-1 --dry-run
\`\`\`

You should see:

<!-- idem:expect -->
\`\`\`text
│ hello-1/0 │ git.commit │ skip   │ present at repo:notes@main (commit …) │
│ hello-1/1 │ file.write │ skip   │ present at root:outbox …│
plan (dry run: nothing changed): 0 apply, 2 skip, 0 conflict, 0 uncertain over 2 effect(s) of 1 output(s)
\`\`\`

## Next

- Change \`agent.mjs\`: call your model, answer with the effects you want. The whole agent
  contract, every effect kind and the HTTP API: \`docs/agents.md\` of idem's repository.
- \`idem status\`, \`idem jobs\`, \`idem ls\`: what is queued, running, recorded.
- \`idem console\`: the same as web pages (the token is \`api.token\` in \`idem.config.json\`).
- \`idem --help\` lists every command; \`idem <command> --help\` says what it does.

The executor serves its HTTP API on a free port (\`api.port\` is 0 here; its log says which). Set a
port there to have a fixed one.
`;

/** The files and folders of the example, written into `dir` beside the config `idem init` wrote. */
export function writeExampleProject(dir: string): void {
  const repo = join(dir, "repos/notes");
  mkdirSync(repo, { recursive: true });
  mkdirSync(join(dir, "outbox"), { recursive: true });
  writeFileSync(join(dir, "agent.mjs"), AGENT);
  writeFileSync(join(dir, "job.json"), `${JSON.stringify(JOB, null, 2)}\n`);
  writeFileSync(join(dir, "README.md"), README);
  writeFileSync(join(dir, ".gitignore"), ".idem/\n");
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, "-c", "maintenance.auto=false", ...args], {
      stdio: "pipe",
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "idem",
        GIT_AUTHOR_EMAIL: "idem@example.invalid",
        GIT_COMMITTER_NAME: "idem",
        GIT_COMMITTER_EMAIL: "idem@example.invalid",
      },
    });
  try {
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo, "README.md"), "# notes\n\nCommitted by the example agent.\n");
    git("add", "README.md");
    git("commit", "-q", "-m", "start");
  } catch (e) {
    throw new CliError(
      `cannot make the example's git repository ${repo}: ${(e as Error).message.split("\n")[0]} (is git installed?)`,
      EXIT.FAILED,
    );
  }
}

/** What the example adds to the config `idem init` writes. */
export function exampleConfig(base: Record<string, unknown>): Record<string, unknown> {
  return {
    ...base,
    repos: { notes: { path: "repos/notes", branch: "main" } },
    roots: { outbox: { path: "outbox" } },
    agents: { writer: { command: ["node", "agent.mjs"], timeoutMs: 60_000 } },
    // A free port: never the 7070 of another idem on this machine.
    api: { ...(base.api as object), port: 0 },
  };
}

/**
 * `idem init --example` needs a folder with none of the example's files in it (an empty one is
 * best): it never overwrites.
 * @throws CliError naming what is there already.
 */
export function checkExampleFolder(dir: string): void {
  const taken = ["agent.mjs", "job.json", "README.md", "repos", "outbox", ".idem"].filter((f) =>
    existsSync(join(dir, f)),
  );
  if (taken.length > 0)
    throw new CliError(
      `${dir} has ${taken.join(", ")} already: idem init --example writes them; run it in an empty folder`,
      EXIT.FAILED,
    );
}
