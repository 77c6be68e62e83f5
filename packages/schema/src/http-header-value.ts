/**
 * Why `value` cannot be sent as an HTTP header value exactly as given, or undefined.
 *
 * A field value is octets (RFC 9110, 5.5): visible ASCII, space, tab and the bytes 0x80-0xFF, which
 * fetch takes as the characters U+0080-U+00FF. Refused: CR, LF, NUL and other control characters
 * (fetch refuses them before sending), any character above U+00FF (fetch cannot turn it into a
 * byte and throws), and a leading or trailing space or tab (fetch drops them without a word).
 * Pure, never throws.
 */
export function unsafeHttpHeaderValue(value: string): string | undefined {
  const bad = /[^\t\x20-\x7e\x80-\xff]/u.exec(value);
  if (bad) {
    const code = bad[0].codePointAt(0) as number;
    const u = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    return code > 0xff
      ? `holds ${u}, above U+00FF: an HTTP header value is bytes (send it percent-encoded or in the body)`
      : `holds the control character ${u}; CR, LF, NUL and other control characters are not allowed`;
  }
  if (/^[\t ]|[\t ]$/.test(value)) return "may not start or end with a space or tab";
  return undefined;
}
