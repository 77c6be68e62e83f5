#!/usr/bin/env node
// An MCP agent for idem (agents.<name>.mcp: true): a model in a tool-calling loop whose tools are
// idem's effect kinds, served by an MCP server the executor starts for this job. The model here is
// a scripted stand-in (no network, no API key): a fixed list of tool calls, which corrects the
// one the server refuses, as a real model reads a tool error and tries again.
//
//   Job in (stdin):  { "jobId": "page-1", "agent": "writer", "input": { "title": "...", "text": "..." } }
//   Reaches idem:    IDEM_MCP_COMMAND (a stdio server to start), or IDEM_MCP_URL + IDEM_MCP_TOKEN
//   Output:          the effects it staged, recorded by the executor once it exits 0
//
// stdout is not its output in this mode: the executor logs it. Exit non-zero (or be killed) and
// nothing it staged is recorded; the job runs again.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const say = (line) => process.stderr.write(`mcp-agent: ${line}\n`);

/** Connects to the job's MCP server: the stdio relay when the executor gives one, else HTTP. */
async function connect() {
  const client = new Client({ name: "idem-example-mcp-agent", version: "1.0.0" });
  if (process.env.IDEM_MCP_COMMAND) {
    const [command, ...args] = JSON.parse(process.env.IDEM_MCP_COMMAND);
    await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
  } else {
    const headers = { Authorization: `Bearer ${process.env.IDEM_MCP_TOKEN}` };
    await client.connect(
      new StreamableHTTPClientTransport(new URL(process.env.IDEM_MCP_URL), {
        requestInit: { headers },
      }),
    );
  }
  return client;
}

/**
 * The model stand-in: given the tools and the last tool result, the next tool call, or null when
 * it is done. It reads the job, writes a note (first with a path the server refuses: it then
 * fixes the field the error names), commits a page, and finishes.
 */
function scriptedModel(tools) {
  const has = (name) => tools.some((t) => t.name === name);
  for (const name of ["job_input", "effect_file_write", "effect_git_commit", "finish"])
    if (!has(name)) throw new Error(`the server offers no ${name} tool`);
  let job;
  const steps = [
    () => ({ name: "job_input", arguments: {} }),
    (last) => {
      job = last.structuredContent;
      const { title, text } = job.input;
      return {
        name: "effect_file_write",
        // A mistake a model makes: a path that climbs out of the root.
        arguments: {
          root: "outbox",
          path: `../notes/${job.jobId}.md`,
          content: `# ${title}\n\n${text}\n`,
        },
      };
    },
    (last, previous) => {
      if (!last.isError) return undefined;
      // Read the error as a model would: fix the field it names and call again.
      const fields = last.structuredContent.issues.map((i) => i.field);
      say(`refused (${fields.join(", ")}): correcting`);
      const args = { ...previous.arguments };
      if (fields.includes("path")) args.path = args.path.replace(/^(\.\.\/)+/, "");
      return { name: previous.name, arguments: args };
    },
    () => ({
      name: "effect_git_commit",
      arguments: {
        repo: "site",
        branch: "main",
        message: `Add page ${job.jobId}: ${job.input.title}`,
        files: [
          { path: `pages/${job.jobId}.md`, content: `# ${job.input.title}\n\n${job.input.text}\n` },
        ],
      },
    }),
    () => ({
      name: "finish",
      arguments: { summary: `a note and a page for ${JSON.stringify(job.input.title)}` },
    }),
  ];
  let previous;
  return {
    next(last) {
      while (steps.length > 0) {
        const call = steps.shift()(last, previous);
        if (call) {
          previous = call;
          return call;
        }
      }
      return null;
    },
  };
}

const client = await connect();
const { tools } = await client.listTools();
say(`${tools.length} tools: ${tools.map((t) => t.name).join(", ")}`);
const model = scriptedModel(tools);
let last;
for (let call = model.next(); call !== null; call = model.next(last)) {
  last = await client.callTool(call);
  say(`${call.name} -> ${last.isError ? "error" : "ok"}: ${last.content[0]?.text.split("\n")[0]}`);
}
await client.close();
if (last?.isError) process.exit(1);
// Optional: a line for the executor's log.
console.log(JSON.stringify({ finished: last?.structuredContent }));
