// The interpreter as `idem interpreter` runs it, without the rest of the CLI: the crash suites start
// it as a real child process (IDEM_FAULT armed, SIGKILL, SIGSTOP) on the built packages.
// usage: node interpreter-child.mjs CONFIG [--concurrency N] [--long]
import { readFileSync } from "node:fs";
import { dirname } from "node:path";
import { openEffects } from "@idem/core";
import { createInterpreter } from "@idem/interpreter";
import { openSqliteJournal } from "@idem/journal";
import { createLogger } from "@idem/runtime";
import { createFaultHook, parseConfig } from "@idem/schema";

const [file, ...args] = process.argv.slice(2);
const parsed = parseConfig(JSON.parse(readFileSync(file, "utf8")), { dir: dirname(file), file });
if (!parsed.ok) {
  console.error(JSON.stringify(parsed.issues));
  process.exit(2);
}
const config = parsed.config;
const at = args.indexOf("--concurrency");
const concurrency = at >= 0 ? Number(args[at + 1]) : 1;
const fault = createFaultHook(process.env.IDEM_FAULT, () => process.kill(process.pid, "SIGKILL"));
const journal = await openSqliteJournal(config.journal.path, {
  synchronous: config.journal.synchronous,
});
// The fault hook reaches inside applies too (interpreter.after-push of a remote git target).
const effects = openEffects(config, { fault });
const interpreter = createInterpreter({
  config,
  journal,
  effects,
  fault,
  concurrency,
  logger: createLogger({ name: "idem-interpreter" }),
  owner: process.env.IDEM_OWNER,
});
const onSignal = () => void interpreter.stop();
process.on("SIGTERM", onSignal);
process.on("SIGINT", onSignal);
let code = 0;
if (args.includes("--long")) {
  interpreter.start();
  await new Promise((resolve) => process.once("SIGTERM", resolve));
  await interpreter.stop();
} else {
  const result = await interpreter.drain();
  process.stdout.write(`${JSON.stringify(result)}\n`);
  code = result.endedDead ? 1 : 0;
}
await effects.close();
await journal.close();
process.exit(code);
