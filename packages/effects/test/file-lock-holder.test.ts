// What a waiter says about the holder of a repository lock (issue 18): a holder stopped by SIGSTOP
// keeps its OS lock (it may resume mid-write at any instant, so nobody takes the lock from it); the
// waiter gives up with LOCKED naming the holder's pid, host and state, so the on-call engineer knows
// which process to continue or kill. A killed holder's lock is dropped by the kernel at once.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { IdemError } from "@idem/schema";
import { afterEach, describe, expect, it } from "vitest";
import { RepoLock } from "../../git/src/repo-lock.js";
import { FileLock } from "../../runtime/src/file-lock.js";

const FILE_LOCK = join(import.meta.dirname, "..", "..", "runtime", "src", "file-lock.ts");

/** A separate Node process that takes the lock at `path` with the real FileLock and keeps it. */
async function holder(path: string): Promise<ChildProcess> {
  const code = `
    import { FileLock } from ${JSON.stringify(FILE_LOCK)};
    await new FileLock(${JSON.stringify(path)}).acquire();
    process.stdout.write("held\\n");
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=@idem/source", "--input-type=module", "-e", code],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      if (out.includes("held")) resolve();
    });
    child.once("exit", (c) => reject(new Error(`the holder exited (${c}) before taking the lock`)));
  });
  return child;
}

/** Waits (60 s at most) until /proc says the process is stopped or not: signals land asynchronously. */
async function stopped(pid: number, want = true): Promise<void> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T") === want) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`process ${pid} did not ${want ? "stop" : "continue"}`);
}

async function lockedError(lock: { acquire(): Promise<unknown> }): Promise<IdemError> {
  const e = await lock.acquire().then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(IdemError);
  expect((e as IdemError).code).toBe("LOCKED");
  return e as IdemError;
}

describe("a FileLock held by another process", () => {
  const children: ChildProcess[] = [];
  const groups: number[] = [];
  const dirs: string[] = [];
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), "idem-file-lock-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const c of children.splice(0)) {
      c.kill("SIGCONT");
      c.kill("SIGKILL");
    }
    for (const g of groups.splice(0)) process.kill(-g, "SIGKILL");
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("records its holder in the lock file", async () => {
    const path = join(tmp(), "lock");
    const release = await new FileLock(path).acquire();
    const rec = JSON.parse(readFileSync(path, "utf8"));
    expect(rec).toMatchObject({ pid: process.pid, host: hostname() });
    expect(Number.isNaN(Date.parse(rec.since))).toBe(false);
    await release();
  });

  it("a stopped holder keeps it: the waiter fails LOCKED naming its pid and that it is stopped; killed, the lock is free at once", async () => {
    const path = join(tmp(), "lock");
    const h = await holder(path);
    children.push(h);
    const pid = h.pid as number;
    h.kill("SIGSTOP");
    await stopped(pid);

    const waiter = new FileLock(path, { timeoutMs: 300 });
    const e = await lockedError(waiter);
    expect(e.message).toContain(`pid ${pid} on host ${hostname()}`);
    expect(e.message).toMatch(/stopped \(SIGSTOP or a debugger\).*kill -CONT/);

    // Continued, it still holds the lock (it never released it) and is reported running.
    h.kill("SIGCONT");
    await stopped(pid, false);
    const e2 = await lockedError(waiter);
    expect(e2.message).toContain(`pid ${pid}`);
    expect(e2.message).toMatch(/, running \(waited/);

    // Killed, the kernel drops its lock: the waiter takes it and records itself.
    h.kill("SIGSTOP");
    h.kill("SIGKILL");
    await new Promise((r) => h.once("exit", r));
    const release = await new FileLock(path, { timeoutMs: 60_000 }).acquire();
    expect(JSON.parse(readFileSync(path, "utf8")).pid).toBe(process.pid);
    await release();
  }, 120_000);

  it("a repository lock held by a stopped interpreter: LOCKED names the holder for the on-call engineer", async () => {
    const gitDir = tmp();
    const h = await holder(join(gitDir, "idem", "lock"));
    children.push(h);
    h.kill("SIGSTOP");
    await stopped(h.pid as number);
    const repo = new RepoLock("site", gitDir, {
      durable: false,
      lockTimeoutMs: 300,
      lockLingerMs: 0,
    });
    repo.attach(gitDir);
    const e = await lockedError(repo);
    expect(e.message).toContain(
      `${join(gitDir, "idem", "lock")} is held by another process: pid ${h.pid}`,
    );
    expect(e.message).toContain("stopped");
    repo.close();
  }, 120_000);

  it("a gone holder whose record lingers (a git child kept the lock) is reported gone", async () => {
    const path = join(tmp(), "lock");
    const h = await holder(path);
    children.push(h);
    const pid = h.pid as number;
    // Another process holds the OS lock now, while the file still names the first (killed) holder.
    h.kill("SIGKILL");
    await new Promise((r) => h.once("exit", r));
    const keeper = spawn("flock", ["-x", path, "sleep", "600"], {
      stdio: "ignore",
      detached: true,
    });
    groups.push(keeper.pid as number);
    // Wait until flock holds it (a FileLock with a short wait fails from then on).
    const until = Date.now() + 60_000;
    let e: IdemError | undefined;
    while (!e && Date.now() < until) {
      try {
        execFileSync("flock", ["-n", path, "true"]);
        await new Promise((r) => setTimeout(r, 10));
      } catch {
        e = await lockedError(new FileLock(path, { timeoutMs: 100 }));
      }
    }
    expect(e?.message).toContain(`pid ${pid}`);
    expect(e?.message).toMatch(/gone; a git child it started may still hold the lock/);
  }, 120_000);
});
