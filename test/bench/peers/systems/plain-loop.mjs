// The plain loop, no engine: for each job in turn, the agent step (the fixed 1 KB output, recorded
// nowhere) and the commit with the git command, exactly as the peers' commit step does it.
// Usage: node plain-loop.mjs REPO JOB_ID...  (one process for the whole batch)
import { commitWithGit, OUTPUT } from "../lib/workload.mjs";

const [repo, ...ids] = process.argv.slice(2);
const agent = async () => OUTPUT;
for (const id of ids) await commitWithGit(repo, id, await agent());
