import { type ChildProcess, execFile, type SpawnOptions, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A network namespace joined to this host by a veth pair: a "host" of a multi-host drill that can
 * be cut off from the network and healed. Processes started in it see only its own loopback and
 * the host end of the pair (`hostAddress`), where the drill's services listen.
 */
export interface NetnsHost extends AsyncDisposable {
  /** The namespace's name (`idem-<hex>`), as `ip netns` lists it. */
  readonly name: string;
  /** The address of this host's end of the pair: services bind it so the namespace reaches them. */
  readonly hostAddress: string;
  /** The namespace's own address on the pair. */
  readonly address: string;
  /** Starts `command` inside the namespace (`ip netns exec`), with the options of `spawn`. */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Cuts the namespace off: its end of the pair goes down, packets in flight are lost. */
  cut(): Promise<void>;
  /** Brings the link back up after `cut()`. */
  heal(): Promise<void>;
  /** Deletes the namespace and the pair (killing nothing: stop your processes first). Idempotent. */
  remove(): Promise<void>;
}

let subnet = 0;

/**
 * Creates a network namespace with a veth pair to this host, on a /30 of 10.213.x.0 of its own.
 * Needs root (CI runs as root) and iproute2.
 * @throws Error when `ip` fails (no permission, no iproute2), after removing what it created.
 */
export async function createNetnsHost(): Promise<NetnsHost> {
  const id = randomBytes(3).toString("hex");
  const name = `idem-${id}`;
  const hostLink = `vh${id}`;
  const nsLink = `vn${id}`;
  // A /30 per namespace, from the process ID and a counter, so parallel test files do not collide.
  const n = (process.pid * 7 + subnet++) % 16_000;
  const base = `10.${200 + Math.floor(n / 1000)}.${Math.floor((n % 1000) / 4)}`;
  const offset = (n % 4) * 64;
  const hostAddress = `${base}.${offset + 1}`;
  const address = `${base}.${offset + 2}`;
  const ip = (...args: string[]) => run("ip", args);
  const inNs = (...args: string[]) => run("ip", ["netns", "exec", name, "ip", ...args]);
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    await ip("link", "del", hostLink).catch(() => undefined); // deletes both ends
    await ip("netns", "del", name).catch(() => undefined);
  };
  try {
    await ip("netns", "add", name);
    await ip("link", "add", hostLink, "type", "veth", "peer", "name", nsLink);
    await ip("link", "set", nsLink, "netns", name);
    await ip("addr", "add", `${hostAddress}/26`, "dev", hostLink);
    await ip("link", "set", hostLink, "up");
    await inNs("addr", "add", `${address}/26`, "dev", nsLink);
    await inNs("link", "set", nsLink, "up");
    await inNs("link", "set", "lo", "up");
  } catch (e) {
    await remove();
    throw e;
  }
  return {
    name,
    hostAddress,
    address,
    spawn: (command, args, options = {}) =>
      spawn("ip", ["netns", "exec", name, command, ...args], options),
    cut: async () => {
      await inNs("link", "set", nsLink, "down");
    },
    heal: async () => {
      await inNs("link", "set", nsLink, "up");
    },
    remove,
    [Symbol.asyncDispose]: remove,
  };
}
