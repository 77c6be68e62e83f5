import { spawn } from "node:child_process";
import { once } from "node:events";
import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import {
  createOwnerId,
  formatOwnerId,
  type OwnerIdentity,
  ownerIsDead,
  parseOwnerId,
  processStartTime,
} from "../src/index.js";

/** This process's owner, parsed (the tests run on Linux, where /proc tells every part). */
function ownIdentity(): OwnerIdentity {
  const o = parseOwnerId(createOwnerId());
  if (!o) throw new Error("createOwnerId made an owner parseOwnerId cannot read");
  return o;
}

/** A child process that ran and exited (reaped), and its owner ID as it would have made it. */
async function exitedChildOwner(): Promise<string> {
  const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"], {
    stdio: "ignore",
  });
  await once(child, "spawn");
  const pid = child.pid as number;
  const startTime = processStartTime(pid);
  expect(startTime).toBeDefined();
  const owner = formatOwnerId({ ...ownIdentity(), pid, startTime: startTime as string });
  expect(ownerIsDead(owner)).toBe(false);
  child.kill("SIGKILL");
  await once(child, "exit");
  return owner;
}

describe("createOwnerId", () => {
  it("names the host and pid and differs between two calls", () => {
    const a = createOwnerId();
    expect(a.startsWith(`${hostname()}:${process.pid}:`)).toBe(true);
    expect(createOwnerId()).not.toBe(a);
  });

  it("carries the boot ID, the PID namespace and the process's start time", () => {
    const o = ownIdentity();
    expect(o).toMatchObject({ host: hostname(), pid: process.pid });
    expect(o.startTime).toBe(processStartTime(process.pid));
    expect(formatOwnerId(o)).toMatch(/^.+:\d+:[0-9a-f]{8}@[0-9a-f-]{36}\/\d+\/\d+$/);
  });
});

describe("ownerIsDead", () => {
  it("is false for this live process", () => {
    expect(ownerIsDead(createOwnerId())).toBe(false);
  });

  it("is true for a child that has exited", async () => {
    expect(ownerIsDead(await exitedChildOwner())).toBe(true);
  });

  it("is true when the PID now belongs to a process that started at another time", () => {
    const o = ownIdentity();
    expect(ownerIsDead(formatOwnerId({ ...o, startTime: `${Number(o.startTime) + 1}` }))).toBe(
      true,
    );
  });

  it("is false for an owner on another host, boot or PID namespace", async () => {
    const dead = parseOwnerId(await exitedChildOwner()) as OwnerIdentity;
    expect(ownerIsDead(formatOwnerId({ ...dead, host: `not-${hostname()}` }))).toBe(false);
    expect(
      ownerIsDead(formatOwnerId({ ...dead, bootId: "00000000-0000-0000-0000-000000000000" })),
    ).toBe(false);
    expect(ownerIsDead(formatOwnerId({ ...dead, pidNs: "1" }))).toBe(false);
  });

  it("is false for the old form, garbage and hostile strings, and never throws", async () => {
    const dead = await exitedChildOwner();
    const { host, pid } = parseOwnerId(dead) as OwnerIdentity;
    const samples = [
      `${host}:${pid}:abcdef12`,
      "",
      "test",
      ":::",
      "@//",
      dead.replace(/\/\d+$/, "/"),
      dead.replace(`:${pid}:`, ":0:"),
      dead.replace(`:${pid}:`, ":-1:"),
      dead.replace(`:${pid}:`, ":99999999999:"),
      `${dead}\n`,
      `${"a:".repeat(10_000)}${dead}`,
      `${host}:1:abcdef12@${"0".repeat(36)}/${"9".repeat(25)}/1`,
      "\u0000\uffff",
      undefined as unknown as string,
      42 as unknown as string,
    ];
    for (const s of samples) expect(ownerIsDead(s)).toBe(false);
  });
});
