import { IdemError } from "@idem/schema";

/**
 * An HTTP answer's body as text, refusing more than `maxBytes` (a target's answer is hostile: a
 * kind reads no more than it can hold). The rest is not read; the connection is released.
 * @throws IdemError UNAVAILABLE naming `what` ("GitHub's answer") when the body is larger.
 */
export async function readCappedText(
  res: Response,
  maxBytes: number,
  what: string,
): Promise<string> {
  if (!res.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body.cancel().catch(() => {});
      throw new IdemError("UNAVAILABLE", `${what} is over ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
