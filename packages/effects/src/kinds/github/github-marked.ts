import { hasKeyMarker, markedKeys } from "@idem/kit";
import type { GitHubClient, Query } from "../../clients/github/github-client.js";

/** The fields of an issue, pull request or comment the probes read; anything else is ignored. */
export interface GitHubItem {
  id?: number;
  number?: number;
  html_url?: string;
  body?: string | null;
  state?: string;
  created_at?: string;
  user?: { login?: string; type?: string } | null;
  /** Set on the issues list's pull requests. */
  pull_request?: unknown;
}

/** A list entry as the probes read it: an object, else nothing (a target's bytes are hostile). */
export function asItem(raw: unknown): GitHubItem {
  return typeof raw === "object" && raw !== null && !Array.isArray(raw) ? (raw as GitHubItem) : {};
}

/** Whether the item was made by `login` (GitHub's logins are case-insensitive). */
export function madeBy(item: GitHubItem, login: string): boolean {
  const by = item.user?.login;
  return typeof by === "string" && by.toLowerCase() === login.toLowerCase();
}

/** A list to read: its path, query, what it is for messages, and where it may stop. */
export interface MarkedList {
  path: string;
  query: Query;
  what: string;
  /** Only items made by this login count (a person who pastes a marker makes nothing present). */
  login: string;
  /**
   * For lists sorted by creation, newest first: stop at the first item created before this (ms),
   * since every later page is older still.
   */
  stopBefore?: number;
  /** Which items count at all (the issues list holds pull requests too). */
  accept?: (item: GitHubItem) => boolean;
}

function* counted(page: unknown[], list: MarkedList): Generator<GitHubItem, "stop" | undefined> {
  for (const raw of page) {
    const item = asItem(raw);
    if (list.stopBefore !== undefined && typeof item.created_at === "string") {
      const at = Date.parse(item.created_at);
      if (Number.isFinite(at) && at < list.stopBefore) return "stop";
    }
    if (list.accept?.(item) ?? true) yield item;
  }
  return undefined;
}

/**
 * The first item of a list made by the login whose body carries `key`'s marker, reading pages only
 * until it is found or the list is past `stopBefore`. One made by another account is someone's
 * copy, unless the login is unchecked and a bot made it (`GitHubIdentity.found`). Waits first for
 * a create of this key whose answer was lost to show in the lists (`GitHubClient.settled`).
 * @throws IdemError as `GitHubClient.pages`; INVALID_CONFIG when the login is refuted.
 */
export async function findMarked(
  client: GitHubClient,
  list: MarkedList,
  key: string,
): Promise<GitHubItem | undefined> {
  await client.settled(key);
  for await (const page of client.pages(list.path, list.query, list.what, key)) {
    const items = counted(page, list);
    for (let next = items.next(); ; next = items.next()) {
      if (next.done) {
        if (next.value === "stop") return undefined;
        break;
      }
      const item = next.value;
      if (!hasKeyMarker(item.body, key)) continue;
      if (madeBy(item, list.login)) return item;
      await client.identity.found(item, describeItem(item));
    }
  }
  return undefined;
}

/** `#12` or `comment 99`, for messages. */
function describeItem(item: GitHubItem): string {
  if (typeof item.number === "number") return `#${item.number}`;
  return typeof item.id === "number" ? `comment ${item.id}` : "an item";
}

/**
 * Every key marked in the list's items (within `stopBefore`), each with where it is (`where`):
 * a key found twice is a duplicate. @throws IdemError as `GitHubClient.pages`.
 */
export async function collectMarked(
  client: GitHubClient,
  list: MarkedList,
  where: (item: GitHubItem) => string,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for await (const page of client.pages(list.path, list.query, list.what, `scan:${list.path}`)) {
    const items = counted(page, list);
    for (let next = items.next(); ; next = items.next()) {
      if (next.done) {
        if (next.value === "stop") return out;
        break;
      }
      if (!madeBy(next.value, list.login)) continue;
      for (const key of markedKeys(next.value.body)) {
        const at = out.get(key) ?? [];
        at.push(where(next.value));
        out.set(key, at);
      }
    }
  }
  return out;
}

/** What a probe stores for an item it found (or apply for one it made): number or id, and URL. */
export function itemDetail(item: GitHubItem): Record<string, unknown> {
  const d: Record<string, unknown> = {};
  if (typeof item.number === "number") d.number = item.number;
  else if (typeof item.id === "number") d.id = item.id;
  if (typeof item.html_url === "string") d.url = item.html_url.slice(0, 500);
  if (item.state === "open" || item.state === "closed") d.state = item.state;
  return d;
}
