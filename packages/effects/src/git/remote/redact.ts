/**
 * Replaces the user info of every URL in `text` (`scheme://user:password@host`,
 * `scheme://token@host`) by `***`: no message, log line or event idem writes about a remote may
 * print a credential, whatever git or the server put in its answer. Never throws.
 */
export function redactUrls(text: string): string {
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/\s@]*@/g, "$1***@");
}
