// The Restate side's service deployment, written as Restate's docs show (the SDK README and
// "Services": restate.service, ctx.run for each non-deterministic step, restate.serve): the handler
// `jobs/run` takes a job ID, `ctx.run("agent")` then `ctx.run("commit")`. The Restate server invokes
// it; after a SIGKILL it is started again on the same port and the server retries its invocations
// (its documented recovery). Prints "ready PORT" once it serves and "inflight-max N" whenever the
// most handlers running at once grows.
// Environment: PEERS_PORT, PEERS_REPO, PEERS_COMMIT (git | isomorphic-git). Started with
// `node --import ./with-resolvers.mjs` on Node 20 (see that file).
import fs from "node:fs";
import * as restate from "@restatedev/restate-sdk";
import isogit from "isomorphic-git";
import { commitWithGit, commitWithIsomorphicGit, OUTPUT, serial } from "../lib/workload.mjs";

const repo = process.env.PEERS_REPO;
const mode = process.env.PEERS_COMMIT;

/** The agent: a fixed 1 KB output (Restate journals a ctx.run result before going on). */
async function agent() {
  return OUTPUT;
}
const oneAtATime = serial();
const commit = (id, output) =>
  oneAtATime(() =>
    mode === "isomorphic-git"
      ? commitWithIsomorphicGit(isogit, fs, repo, id, output)
      : commitWithGit(repo, id, output),
  );

let running = 0;
let most = 0;
const jobs = restate.service({
  name: "jobs",
  handlers: {
    run: async (ctx, id) => {
      running += 1;
      if (running > most) {
        most = running;
        process.stdout.write(`inflight-max ${most}\n`);
      }
      try {
        const output = await ctx.run("agent", () => agent(id));
        await ctx.run("commit", () => commit(id, output));
        return id;
      } finally {
        running -= 1;
      }
    },
  },
});

const port = await restate.serve({ services: [jobs], port: Number(process.env.PEERS_PORT) });
process.stdout.write(`ready ${port}\n`);
