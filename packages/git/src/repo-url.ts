/**
 * The forms a remote repository's URL may take in `repos.<alias>.url`. Pure: no I/O. Its
 * redaction in messages is `redactUrl` (redact-url.ts).
 */

/** The URL schemes git may reach a remote repository by. */
const SCHEMES = /^(ssh|git\+ssh|ssh\+git|https?|git|file):\/\//i;
/** scp-like ssh: `[user@]host:path` (no scheme, a colon before the first slash). */
const SCP_LIKE = /^(?:[A-Za-z0-9._~-]+@)?[A-Za-z0-9.-]+:(?!\/\/)[^\s]+$/;

/**
 * What is wrong with a `repos.<alias>.url`, or undefined when git may be pointed at it: an
 * `ssh://`, `https://`, `http://`, `git://` or `file://` URL, an scp-like `user@host:path`, or the
 * path of a (bare) repository. A URL with a password is refused: credentials stay with git.
 * Never echoes the URL (it may hold a secret). Never throws.
 */
export function repoUrlIssue(url: string): string | undefined {
  if (url.startsWith("-")) return "may not start with - (git would read it as an option)";
  if (/[\x00-\x1f\x7f]/.test(url)) return "may not contain control characters";
  if (SCHEMES.test(url)) {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return "is not a valid URL";
    }
    if (u.password !== "")
      return "carries a password; idem never stores credentials: leave them to git (an ssh agent, a credential helper or GIT_ASKPASS)";
    if (u.protocol !== "file:" && u.hostname === "") return "names no host";
    return undefined;
  }
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url))
    return "must be an ssh://, https://, git:// or file:// URL, user@host:path, or the path of a bare repository";
  return undefined;
}

/** True when `url` is a local path rather than a URL or an scp-like address. Never throws. */
export function isRepoPath(url: string): boolean {
  if (SCHEMES.test(url) || /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) return false;
  // A Windows drive letter is a path; anything else with a colon before a slash is scp-like.
  if (/^[A-Za-z]:[\\/]/.test(url)) return true;
  return !SCP_LIKE.test(url) || url.startsWith("/") || url.startsWith(".");
}
