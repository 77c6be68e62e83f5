import { createSubjectPublisher, type SubjectPublisher } from "@idem/nats";
import type { Config } from "@idem/schema";
import type { NoticeChannel } from "./approval-notice.js";
import {
  assertApprovalNotices,
  type RecordedNotices,
  recordedChannels,
} from "./recorded-notice.js";

/** How long a notice's POST may take before it is tried again at the next sweep. */
const NOTICE_TIMEOUT_MS = 10_000;

/**
 * The places `approvals.notify` names, each with how a notice is sent there: a webhook's POST, a
 * NATS subject's publish (JetStream with `Nats-Msg-Id` = the notice's id when a stream captures
 * it), and with `record` the keys whose notices become recorded outputs (`recordedChannels`).
 * `close()` drains the NATS connection opened, unless `publisher` was given.
 */
export function noticeChannels(options: {
  settings: Config["approvals"] | undefined;
  send: typeof fetch;
  natsServers?: string;
  publisher?: SubjectPublisher;
  record?: RecordedNotices;
}): { channels: NoticeChannel[]; close(): Promise<void> } {
  const { settings, send } = options;
  let publisher = options.publisher;
  const channels: NoticeChannel[] = [];
  const webhook = settings?.notify?.webhook;
  if (webhook)
    channels.push({
      to: "webhook",
      async send(notice) {
        const r = await send(webhook, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(notice),
          signal: AbortSignal.timeout(NOTICE_TIMEOUT_MS),
        });
        if (!r.ok) throw new Error(`the webhook answered ${r.status}`);
      },
    });
  const nats = settings?.notify?.nats;
  const natsUrl = nats?.url ?? options.natsServers;
  if (nats && natsUrl)
    channels.push({
      to: "nats",
      async send(notice) {
        publisher ??= createSubjectPublisher();
        const data = new TextEncoder().encode(JSON.stringify(notice));
        await publisher.publish(natsUrl, nats.subject, data, notice.id);
      },
    });

  if (options.record) {
    assertApprovalNotices(options.record);
    channels.push(...recordedChannels(settings?.notify, options.record));
  }
  return {
    channels,
    async close() {
      if (!options.publisher) await publisher?.close();
    },
  };
}
