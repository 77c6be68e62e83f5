import { randomUUID } from "node:crypto";
import { hostname } from "node:os";

/**
 * A process's name in journal leases and events: `<host>:<pid>:<random>`, so two processes on one
 * host, or one restarted with the same pid, never share an owner (a lease token still decides who
 * holds a lease; the owner only says who it was).
 */
export function createOwnerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
