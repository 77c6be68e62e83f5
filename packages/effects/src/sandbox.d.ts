export {
  checkGitFileContent,
  checkMessage,
  checkRelativePath,
  isGitAttributesPath,
  messageWithTrailer,
  refComponent,
  trailerKeys,
} from "@idem/git";
/** Throws SANDBOX_VIOLATION with the field it is about. */
export declare function refuse(field: string, why: string): never;
/**
 * An effect key goes into commit trailers, ref names, headers and message ids, so it must be a
 * single printable token: `<jobId>/<index>` always is.
 */
export declare function checkKey(key: string): void;
/**
 * A relative path joined to its target's folder (`base`; skipped when undefined) must stay under
 * PATH_MAX, or every write to it fails with ENAMETOOLONG.
 * @throws IdemError SANDBOX_VIOLATION naming `field`
 */
export declare function checkFullPath(field: string, base: string | undefined, p: string): void;
/**
 * Checks user headers of an http.request or nats.publish: valid names, none reserved to idem (and
 * no `Nats-*` for NATS), no CR, LF or NUL, at most 8 KiB each; for HTTP, values that fetch sends
 * byte for byte ({@link unsafeHttpHeaderValue}: nothing above U+00FF, no control characters, no
 * leading or trailing space).
 * @throws IdemError SANDBOX_VIOLATION naming the header.
 */
export declare function checkHeaders(
  headers: Record<string, string> | undefined,
  nats: boolean,
): void;
/**
 * Runs a kind's text check so that a refusal names `field` when it names none (a patch parser's
 * "corrupt patch at line 7" is about `patch`): what `check` reports is always a field's.
 * @throws the check's IdemError, with `details.field` set
 */
export declare function checkingField(field: string, check: () => void): void;
//# sourceMappingURL=sandbox.d.ts.map
