// The throws @idem/kit/test injects: into every request a kind makes through `ctx.fetch` (before
// it is sent, or after it took effect and before its answer reaches the kind) and at every
// `ctx.fault` call. Once one has fired, everything the kind asks of the host throws, as in a
// process that died there.

/** Where one scenario throws: the n-th request (before or after it took effect), or the n-th fault call. */
export type CrashAt =
  | { at: "request"; n: number; when: "before" | "after" }
  | { at: "fault"; n: number };

/** The throw itself: what a kind's catch sees as the cause of a failed fetch, or from `ctx.fault`. */
export class InjectedCrash extends Error {
  override readonly name = "InjectedCrash";
}

/** One request the kind made through `ctx.fetch`, as the tester saw it. */
export interface SeenRequest {
  method: string;
  /** The URL's path (never its query or credentials). */
  path: string;
  /** Whether it reached the target: false when the injected throw came before it. */
  tookEffect: boolean;
}

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Whether a request changes the target by its method (RFC 9110: GET, HEAD and OPTIONS are safe). */
export const isWrite = (r: SeenRequest): boolean => r.tookEffect && !READS.has(r.method);

/** The host's parts the tester hands the kind, counting and throwing as armed. */
export interface Injector {
  readonly fetch: typeof fetch;
  fault(point: string): void;
  /** Starts counting afresh, armed at `crash` (or not at all). */
  arm(crash: CrashAt | undefined): void;
  /** Whether the armed throw fired since the last `arm`. */
  readonly fired: boolean;
  /** The requests and fault calls since the last `arm`. */
  readonly requests: readonly SeenRequest[];
  readonly faults: readonly string[];
}

/** Wraps `base` (the fetch the kind would have had) with the counting and the armed throw. */
export function createInjector(base: typeof fetch): Injector {
  let crash: CrashAt | undefined;
  let fired = false;
  let requests: SeenRequest[] = [];
  let faults: string[] = [];
  const die = (what: string): InjectedCrash => {
    fired = true;
    return new InjectedCrash(`@idem/kit/test: a crash injected ${what}`);
  };
  const lost = (cause: InjectedCrash): TypeError => new TypeError("fetch failed", { cause });
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const request = new Request(input, init);
    const seen: SeenRequest = {
      method: request.method.toUpperCase(),
      path: new URL(request.url).pathname,
      tookEffect: false,
    };
    requests.push(seen);
    const n = requests.length;
    const label = `${seen.method} ${seen.path}`;
    if (fired) throw lost(die(`after the process died (${label})`));
    if (crash?.at === "request" && crash.n === n && crash.when === "before")
      throw lost(die(`before request ${n} (${label})`));
    const response = await base(request);
    seen.tookEffect = true;
    if (crash?.at === "request" && crash.n === n && crash.when === "after") {
      await response.body?.cancel();
      throw lost(die(`after request ${n} took effect (${label})`));
    }
    if (fired) {
      await response.body?.cancel();
      throw lost(die(`after the process died (${label})`));
    }
    return response;
  };
  return {
    fetch: wrapped as typeof fetch,
    fault(point) {
      faults.push(point);
      if (fired) throw die(`after the process died (fault point ${point})`);
      if (crash?.at === "fault" && crash.n === faults.length)
        throw die(`at fault point ${point} (call ${faults.length})`);
    },
    arm(next) {
      crash = next;
      fired = false;
      requests = [];
      faults = [];
    },
    get fired() {
      return fired;
    },
    get requests() {
      return requests;
    },
    get faults() {
      return faults;
    },
  };
}
