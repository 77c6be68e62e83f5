import { IdemError } from "@idem/schema";

/** The first bytes of an answer's body, read as text (see `readTextPrefix`). */
export interface TextPrefix {
  /** The bytes read, as UTF-8 (a character cut at the end is replaced by U+FFFD). */
  text: string;
  /** Whether the body went on past them (the rest was not read). */
  truncated: boolean;
}

/**
 * The first `maxBytes` of an HTTP answer's body, streamed: no more than `maxBytes` (and one chunk)
 * is ever held, the rest is not read and the body is cancelled, so an answer of any size costs a
 * kind no more memory than it asked for. Never throws for the size; a read that fails (the
 * connection dropped) rejects with fetch's error.
 */
export async function readTextPrefix(res: Response, maxBytes: number): Promise<TextPrefix> {
  if (!res.body) return { text: "", truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: Buffer.concat(chunks).toString("utf8"), truncated: false };
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        await reader.cancel().catch(() => {});
        return { text: Buffer.concat(chunks).toString("utf8"), truncated: true };
      }
      size += value.byteLength;
      chunks.push(value);
    }
  } finally {
    reader.releaseLock();
  }
}

/**
 * An HTTP answer's body as text, refusing more than `maxBytes` (a target's answer is hostile: a
 * kind reads no more than it can hold). Streamed as `readTextPrefix`; the rest is not read.
 * @throws IdemError UNAVAILABLE naming `what` ("GitHub's answer") when the body is larger.
 */
export async function readCappedText(
  res: Response,
  maxBytes: number,
  what: string,
): Promise<string> {
  const { text, truncated } = await readTextPrefix(res, maxBytes);
  if (truncated) throw new IdemError("UNAVAILABLE", `${what} is over ${maxBytes} bytes`);
  return text;
}
