import { type ChildProcess, execFile, type SpawnOptions, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { promisify } from "node:util";

const run = promisify(execFile);
const ip = (...args: string[]) => run("ip", args);

/**
 * A "host" of a multi-host drill: a network namespace on the drill's bridge. Processes started in
 * it see its own loopback and the bridge, where the drill's services listen; it can be cut off
 * from the network and healed.
 */
export interface NetnsHost {
  /** The namespace's name (`idem-<hex>`), as `ip netns` lists it. */
  readonly name: string;
  /** Its address on the bridge. */
  readonly address: string;
  /** Starts `command` inside the namespace (`ip netns exec`, which execs it: the PID is its own). */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Cuts the host off: its link goes down, so it reaches nothing and nothing reaches it. */
  cut(): Promise<void>;
  /** Brings its link back up after `cut()`. */
  heal(): Promise<void>;
}

/**
 * A bridge on this machine with a /24 of its own (10.213.<n>.0/24), and namespaces joined to it by
 * veth pairs. Services bind `address` (the bridge's) so that every host reaches them, and this
 * process reaches them there too. Nothing here routes anywhere else.
 */
export interface NetnsNetwork extends AsyncDisposable {
  /** The bridge's name (`ib<hex>`), as `ip link` lists it. */
  readonly bridge: string;
  /** The bridge's address: where services listen. */
  readonly address: string;
  /** The bridge's network, as a CIDR (for a server's list of trusted clients). */
  readonly network: string;
  /** Adds a host (namespace) with the next address on the bridge. */
  addHost(): Promise<NetnsHost>;
  /**
   * Kills every process still inside one of its namespaces (SIGKILL by PID: `ip netns pids`), then
   * deletes every namespace, veth pair and the bridge. Idempotent.
   */
  remove(): Promise<void>;
}

/**
 * Creates the bridge of a drill's network. Needs root (CI runs as root) and iproute2.
 * @throws Error when `ip` fails (no permission, no iproute2), after removing what it created.
 */
export async function createNetnsNetwork(): Promise<NetnsNetwork> {
  const id = randomBytes(3).toString("hex");
  const bridge = `ib${id}`;
  const subnet = `10.213.${(process.pid + Number.parseInt(id, 16)) % 250}`;
  const address = `${subnet}.1`;
  const namespaces: string[] = [];
  const links: string[] = [];
  let removed = false;
  const remove = async () => {
    if (removed) return;
    removed = true;
    // Only the drill's processes live in its namespaces: none may outlive them there.
    for (const ns of namespaces) {
      const { stdout } = await ip("netns", "pids", ns).catch(() => ({ stdout: "" }));
      for (const pid of stdout.split(/\s+/).filter((p) => /^\d+$/.test(p))) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
    for (const l of links) await ip("link", "del", l).catch(() => undefined); // both ends
    for (const ns of namespaces) await ip("netns", "del", ns).catch(() => undefined);
    await ip("link", "del", bridge).catch(() => undefined);
  };
  try {
    await ip("link", "add", bridge, "type", "bridge");
    await ip("addr", "add", `${address}/24`, "dev", bridge);
    await ip("link", "set", bridge, "up");
  } catch (e) {
    await remove();
    throw e;
  }

  const addHost = async (): Promise<NetnsHost> => {
    const n = namespaces.length + 10;
    const hid = `${id}${n}`;
    const name = `idem-${hid}`;
    const hostLink = `vh${hid}`;
    const nsLink = `vn${hid}`;
    const hostAddress = `${subnet}.${n}`;
    const inNs = (...args: string[]) => run("ip", ["netns", "exec", name, "ip", ...args]);
    namespaces.push(name);
    await ip("netns", "add", name);
    await ip("link", "add", hostLink, "type", "veth", "peer", "name", nsLink);
    links.push(hostLink);
    await ip("link", "set", nsLink, "netns", name);
    await ip("link", "set", hostLink, "master", bridge);
    await ip("link", "set", hostLink, "up");
    await inNs("addr", "add", `${hostAddress}/24`, "dev", nsLink);
    await inNs("link", "set", nsLink, "up");
    await inNs("link", "set", "lo", "up");
    return {
      name,
      address: hostAddress,
      spawn: (command, args, options = {}) =>
        spawn("ip", ["netns", "exec", name, command, ...args], options),
      cut: async () => {
        await inNs("link", "set", nsLink, "down");
      },
      heal: async () => {
        await inNs("link", "set", nsLink, "up");
      },
    };
  };

  return {
    bridge,
    address,
    network: `${subnet}.0/24`,
    addHost: async () => {
      try {
        return await addHost();
      } catch (e) {
        await remove();
        throw e;
      }
    },
    remove,
    [Symbol.asyncDispose]: remove,
  };
}
