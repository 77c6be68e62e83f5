/** How much of an agent's stdout an error quotes: the head, and the tail when it is longer. */
const HEAD = 160;
const TAIL = 80;

/** `s` with every character outside printable ASCII escaped (\u000a, \u001b, \u202e). */
export const escapedText = (s: string): string =>
  s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** `s` as a JSON string with every character outside printable ASCII escaped. */
const quoted = (s: string): string => escapedText(JSON.stringify(s));

/**
 * What an agent printed, for the error that says it was not one JSON value: its size and a bounded
 * excerpt (the first 160 characters, and the last 80 when there are more than 240), quoted and
 * escaped so that the hostile bytes of an agent's output (terminal escapes, newlines, bidi
 * controls) cannot forge log lines or repaint a terminal. `printed nothing` for empty output.
 */
export function describeAgentStdout(text: string): string {
  if (text.length === 0) return "it printed nothing on stdout";
  const bytes = Buffer.byteLength(text, "utf8");
  if (text.length <= HEAD + TAIL) return `it printed ${bytes} bytes: ${quoted(text)}`;
  return `it printed ${bytes} bytes, starting ${quoted(text.slice(0, HEAD))} and ending ${quoted(text.slice(-TAIL))}`;
}
