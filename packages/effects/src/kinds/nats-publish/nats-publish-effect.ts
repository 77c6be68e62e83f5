import { aliasOf, type HostNats, IdemError } from "@idem/kit";
import type { PublishTransport } from "../../publish-transport.js";
import { checkHeaders, checkKey, refuse } from "../../sandbox.js";
import type { PublishTarget, PublishTargets } from "./publish-targets.js";
import type { NatsPublishSpec } from "./spec.js";

/** The full subject of a publish, checked token by token. @throws IdemError SANDBOX_VIOLATION */
export function publishSubject(
  nats: HostNats | undefined,
  target: PublishTarget,
  subject: string,
): string {
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
  const own = nats?.subjectPrefix ?? "idem";
  if (full === own || full.startsWith(`${own}.`))
    refuse("subject", `"${full}" is one of idem's own subjects`);
  return full;
}

/**
 * The checked streams of publish targets: each (url, stream, prefix) is read once through the
 * transport and remembered until `clear()`; a failed check is forgotten so the next apply asks again.
 */
export class PublishStreamChecks {
  private readonly checked = new Map<string, Promise<void>>();

  /**
   * Checks once that the stream of target `alias` exists and captures `<prefix>.>`.
   * @throws IdemError TARGET_MISSING (the stream cannot be read), SANDBOX_VIOLATION (it does not
   * capture the prefix), UNAVAILABLE (no connection).
   */
  check(transport: PublishTransport, url: string, alias: string, t: PublishTarget): Promise<void> {
    const id = `${url}\n${t.stream}\n${t.subjectPrefix}`;
    let p = this.checked.get(id);
    if (!p) {
      p = (async () => {
        const r = await transport.checkStream(url, t);
        if (r.status === "missing") {
          throw new IdemError(
            "TARGET_MISSING",
            `publish target "${alias}": stream ${t.stream} is missing`,
            { cause: r.cause },
          );
        }
        if (r.status === "uncovered") {
          throw new IdemError(
            "SANDBOX_VIOLATION",
            `publish target "${alias}": stream ${t.stream} (${r.subjects.join(", ")}) does not capture ${t.subjectPrefix}.>`,
          );
        }
      })();
      p.catch(() => this.checked.delete(id));
      this.checked.set(id, p);
    }
    return p;
  }

  /** Forgets every check (on close). */
  clear(): void {
    this.checked.clear();
  }
}

/** What nats.publish reaches its targets with: the targets, the transport and the checked streams. */
export interface NatsPublisher {
  readonly targets: PublishTargets;
  /** idem's own NATS servers, the URL of a target that names none. */
  readonly nats: HostNats | undefined;
  readonly transport: PublishTransport | undefined;
  readonly checks: PublishStreamChecks;
}

/**
 * nats.publish: publishes JSON to `<prefix>.<subject>` on JetStream with `Nats-Msg-Id: <key>`, and
 * expects the target's stream to store it. Not probeable; the stream drops a repeat of the key
 * within its duplicate window (target dedup), so a retry after a lost PubAck is safe inside that
 * window.
 * @throws IdemError UNKNOWN_ALIAS, SANDBOX_VIOLATION, INVALID_STATE (no transport), the
 *   transport's UNAVAILABLE, TIMEOUT, TARGET_CONFLICT; the stream check's TARGET_MISSING.
 */
export async function publishEffect(
  p: NatsPublisher,
  spec: NatsPublishSpec,
  key: string,
): Promise<Record<string, unknown>> {
  checkKey(key);
  const t = aliasOf(p.targets, spec.target);
  if (!t)
    throw new IdemError("UNKNOWN_ALIAS", `unknown publish target "${spec.target}"`, {
      details: { field: "target" },
    });
  const subject = publishSubject(p.nats, t, spec.subject);
  checkHeaders(spec.headers, true);
  const url = publishUrl(t, p.nats);
  if (!p.transport) {
    throw new IdemError(
      "INVALID_STATE",
      "nats.publish has no transport: build the kinds with a publishTransport (builtInKinds; @idem/core's loadKinds does)",
    );
  }
  await p.checks.check(p.transport, url, spec.target, t);
  const ack = await p.transport.publish(url, {
    subject,
    data: new TextEncoder().encode(JSON.stringify(spec.data ?? null)),
    msgId: key,
    headers: spec.headers ?? {},
    stream: t.stream,
  });
  return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
}

/** Where a target's stream is: its own url, else idem's NATS servers, else the local default. */
export function publishUrl(t: PublishTarget, nats: HostNats | undefined): string {
  return t.url ?? nats?.servers ?? "nats://127.0.0.1:4222";
}
