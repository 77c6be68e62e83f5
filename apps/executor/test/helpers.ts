import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Config, parseConfig } from "@idem/schema";

export const AGENT = fileURLToPath(new URL("./fixtures/counting-agent.mjs", import.meta.url));

let counter = 0;
/** A unique token for stream names and subject prefixes on a shared server. */
export function unique(): string {
  counter += 1;
  return `${process.pid}_${counter}_${Math.random().toString(36).slice(2, 6)}`;
}

/**
 * An agent timeout, ack wait or lease that no passing run reaches, however slow or busy the machine:
 * what a test gets unless it exercises that timeout or lease itself and sets a short one.
 */
export const UNREACHED_MS = 120_000;

/** How long `waitFor` waits for a condition by default: far beyond a passing run on a busy machine. */
export const WAIT_MS = 60_000;

export interface TestConfigOptions {
  dir: string;
  journalPath: string;
  natsUrl?: string;
  queue?: Partial<Config["queue"]>;
  timeoutMs?: number;
  extra?: Record<string, unknown>;
}

/**
 * A config with the counting agent as `writer` and NATS when a URL is given. The agent timeout and
 * the ack wait (the embedded queue's lease; JetStream's ack wait, as there is no backoff) are
 * {@link UNREACHED_MS}: a test that exercises a timeout, a lease or a backoff sets it, knowing that
 * on JetStream a backoff's first step is the ack wait. A failed delivery is retried at once on
 * JetStream, after 1 s on the embedded queue: a job due again at once can be claimed by the
 * executor's own poll while it is still letting the failed delivery go, and that claim is skipped
 * with its lease kept, so the job waits out the whole lease.
 */
export function testConfig(o: TestConfigOptions): Config {
  const u = unique();
  const raw: Record<string, unknown> = {
    journal: { path: o.journalPath },
    agents: {
      writer: { command: [process.execPath, AGENT], timeoutMs: o.timeoutMs ?? UNREACHED_MS },
    },
    queue: {
      ackWaitMs: UNREACHED_MS,
      maxDeliver: 3,
      backoffMs: o.natsUrl ? [] : [1_000],
      maxAckPending: 2,
      ...o.queue,
    },
    roots: { outbox: { path: "outbox" } },
    ...o.extra,
  };
  if (o.natsUrl) {
    raw.nats = {
      url: o.natsUrl,
      stream: `JOBS_${u}`,
      subjectPrefix: `idem_${u}`,
      duplicateWindowMs: 60_000,
      maxAgeMs: 3_600_000,
      publishRetryMs: 5_000,
    };
  }
  const r = parseConfig(raw, { dir: o.dir });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.config;
}

/**
 * `config` as an `idem.config.json` holds it, for a test that starts the built CLI: without the
 * loaded-only `dir` and `file`, the kinds' `sections` back at the top level.
 */
export function configFileJson(config: Config): string {
  const { dir: _d, file: _f, sections, ...own } = config;
  return JSON.stringify({ ...own, ...sections });
}

/** How many times the counting agent ran for each job. */
export async function runCounts(file: string): Promise<Record<string, number>> {
  const text = await readFile(file, "utf8").catch(() => "");
  const out: Record<string, number> = {};
  for (const line of text.split("\n").filter(Boolean)) out[line] = (out[line] ?? 0) + 1;
  return out;
}

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = WAIT_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function countFile(dir: string): string {
  return join(dir, "runs.txt");
}
