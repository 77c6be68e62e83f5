import {
  type Config,
  IdemError,
  type NatsPublishSpec,
  NatsPublishSpecSchema,
  type PublishTarget,
} from "@idem/schema";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, headers as natsHeaders } from "@nats-io/transport-node";
import type { EffectHandler } from "./effect-handler.js";
import { checkHeaders, checkKey, refuse } from "./sandbox.js";

/** True when the stream subject `pattern` captures every subject under `prefix.>`. */
export function patternCovers(pattern: string, prefix: string): boolean {
  const p = pattern.split(".");
  const s = [...prefix.split("."), ">"];
  for (let i = 0; i < s.length; i++) {
    const a = p[i];
    const b = s[i] as string;
    if (a === undefined) return false;
    if (a === ">") return true;
    if (b === ">") return false;
    if (a !== "*" && a !== b) return false;
  }
  return p.length === s.length;
}

/** The full subject of a publish, checked token by token. @throws IdemError SANDBOX_VIOLATION */
export function publishSubject(config: Config, target: PublishTarget, subject: string): string {
  if (
    typeof subject !== "string" ||
    !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(subject) ||
    subject.length > 255
  ) {
    refuse(
      "subject",
      `${JSON.stringify(subject)} must be dot-separated tokens: no wildcards, $ or spaces`,
    );
  }
  const full = `${target.subjectPrefix}.${subject}`;
  const own = config.nats?.subjectPrefix ?? "idem";
  if (full === own || full.startsWith(`${own}.`))
    refuse("subject", `"${full}" is one of idem's own subjects`);
  return full;
}

/** NATS connections by URL, opened on first use and closed by `close`. */
export class NatsConnections {
  private readonly conns = new Map<string, Promise<NatsConnection>>();
  private readonly checked = new Map<string, Promise<void>>();

  get(url: string): Promise<NatsConnection> {
    let c = this.conns.get(url);
    if (!c) {
      c = connect({ servers: url, name: "idem-effects", timeout: 5000 }).catch((e: unknown) => {
        this.conns.delete(url);
        throw new IdemError(
          "UNAVAILABLE",
          `cannot connect to NATS at ${url}: ${(e as Error).message}`,
          { cause: e },
        );
      });
      this.conns.set(url, c);
    }
    return c.then((nc) => {
      if (nc.isClosed()) {
        this.conns.delete(url);
        return this.get(url);
      }
      return nc;
    });
  }

  /** Checks once per connection that `stream` exists and captures `<prefix>.>`. */
  checkStream(url: string, nc: NatsConnection, alias: string, t: PublishTarget): Promise<void> {
    const id = `${url}\n${t.stream}\n${t.subjectPrefix}`;
    let p = this.checked.get(id);
    if (!p) {
      p = (async () => {
        const jsm = await jetstreamManager(nc);
        let subjects: string[];
        try {
          subjects = (await jsm.streams.info(t.stream)).config.subjects ?? [];
        } catch (e) {
          throw new IdemError(
            "TARGET_MISSING",
            `publish target "${alias}": stream ${t.stream} is missing`,
            { cause: e },
          );
        }
        if (!subjects.some((s) => patternCovers(s, t.subjectPrefix))) {
          throw new IdemError(
            "SANDBOX_VIOLATION",
            `publish target "${alias}": stream ${t.stream} (${subjects.join(", ")}) does not capture ${t.subjectPrefix}.>`,
          );
        }
      })();
      p.catch(() => this.checked.delete(id));
      this.checked.set(id, p);
    }
    return p;
  }

  async close(): Promise<void> {
    const all = [...this.conns.values()];
    this.conns.clear();
    this.checked.clear();
    for (const c of all) {
      const nc = await c.catch(() => undefined);
      await nc?.drain().catch(() => nc.close());
    }
  }
}

/**
 * nats.publish: publishes JSON to `<prefix>.<subject>` on JetStream with `Nats-Msg-Id: <key>`, and
 * expects the target's stream to store it. Not probeable; the stream drops a repeat of the key within
 * its duplicate window (target dedup), so a retry after a lost PubAck is safe inside that window.
 */
export function createNatsPublishHandler(
  config: Config,
  conns: NatsConnections,
  defaultUrl: string | undefined,
): EffectHandler<NatsPublishSpec> {
  const targetOf = (alias: string) => {
    const t = Object.hasOwn(config.publish, alias) ? config.publish[alias] : undefined;
    if (!t)
      throw new IdemError("UNKNOWN_ALIAS", `unknown publish target "${alias}"`, {
        details: { field: "target" },
      });
    return t;
  };
  return {
    kind: "nats.publish",
    schema: NatsPublishSpecSchema,
    probeable: () => false,
    targetDedup: () => true,
    probe() {
      return Promise.reject(
        new IdemError(
          "INVALID_STATE",
          "nats.publish cannot be probed; it is deduplicated by its stream",
        ),
      );
    },
    async apply(spec, key) {
      checkKey(key);
      const t = targetOf(spec.target);
      const subject = publishSubject(config, t, spec.subject);
      checkHeaders(spec.headers, true);
      const url = t.url ?? config.nats?.url ?? defaultUrl ?? "nats://127.0.0.1:4222";
      const nc = await conns.get(url);
      await conns.checkStream(url, nc, spec.target, t);
      const h = natsHeaders();
      for (const [k, v] of Object.entries(spec.headers ?? {})) h.set(k, v);
      const payload = new TextEncoder().encode(JSON.stringify(spec.data ?? null));
      try {
        const ack = await jetstream(nc).publish(subject, payload, {
          msgID: key,
          headers: h,
          expect: { streamName: t.stream },
          timeout: 10_000,
        });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      } catch (e) {
        const msg = (e as Error).message ?? String(e);
        if (/timeout|TIMEOUT/.test(msg))
          throw new IdemError("TIMEOUT", `publish to ${subject} timed out`, { cause: e });
        if (/expected stream|wrong last/i.test(msg)) {
          throw new IdemError(
            "TARGET_CONFLICT",
            `publish to ${subject} did not land in stream ${t.stream}: ${msg}`,
            { cause: e },
          );
        }
        throw new IdemError("UNAVAILABLE", `publish to ${subject} failed: ${msg}`, { cause: e });
      }
    },
  };
}
