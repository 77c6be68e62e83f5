/** The codes of {@link IdemClientError}: the API's answers and the transport's failures. */
export type IdemClientErrorCode =
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "TOO_LARGE"
  | "UNAVAILABLE"
  | "TIMEOUT"
  | "JOB_CONFLICT"
  | "INVALID_INPUT"
  | "NOT_IMPLEMENTED"
  | "HTTP"
  | "NATS";

/**
 * The one error the client throws: a `code` to branch on and the HTTP `status` when the server
 * answered (undefined for a network error or a timeout).
 *
 * UNAUTHORIZED (401), FORBIDDEN (403: an agent's token asking for what it may not do, or a
 * browser's cross-site request), TOO_LARGE (413), UNAVAILABLE (5xx or the network, after the retries),
 * TIMEOUT (the deadline passed), JOB_CONFLICT (409 on enqueue), INVALID_INPUT (400 on enqueue, or a
 * job the schema refuses before a JetStream publish), NOT_IMPLEMENTED (501), HTTP (any other
 * status), NATS (a JetStream publish refused for a reason a retry cannot fix; the NATS client's
 * error is the `cause`). The bearer token never appears in the message.
 */
export class IdemClientError extends Error {
  override readonly name = "IdemClientError";
  /** What went wrong, fit for a `switch`. */
  readonly code: IdemClientErrorCode;
  /** The HTTP status, when the server answered. */
  readonly status: number | undefined;
  /** The server's JSON body, when it sent one. */
  readonly body: unknown;

  constructor(
    code: IdemClientErrorCode,
    message: string,
    options: { status?: number; body?: unknown; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.status = options.status;
    this.body = options.body;
  }
}

/**
 * Whether `e` is an {@link IdemClientError}, of the given code when one is given.
 *
 * Works across copies of the package (it checks the name and code, not the prototype).
 */
export function isIdemClientError(e: unknown, code?: IdemClientErrorCode): e is IdemClientError {
  if (!(e instanceof Error) || e.name !== "IdemClientError") return false;
  return code === undefined || (e as IdemClientError).code === code;
}
