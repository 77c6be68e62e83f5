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

export interface TestConfigOptions {
  dir: string;
  journalPath: string;
  natsUrl?: string;
  queue?: Partial<Config["queue"]>;
  timeoutMs?: number;
  extra?: Record<string, unknown>;
}

/** A config with short ack waits and backoffs, the counting agent as `writer`, NATS when a URL is given. */
export function testConfig(o: TestConfigOptions): Config {
  const u = unique();
  const raw: Record<string, unknown> = {
    journal: { path: o.journalPath },
    agents: { writer: { command: [process.execPath, AGENT], timeoutMs: o.timeoutMs ?? 2_000 } },
    queue: { ackWaitMs: 1_000, maxDeliver: 3, backoffMs: [200, 400], maxAckPending: 2, ...o.queue },
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
  timeoutMs = 15_000,
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
