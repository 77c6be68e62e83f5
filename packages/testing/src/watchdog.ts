import { spawn } from "node:child_process";

/**
 * A detached watchdog process that SIGKILLs a server this process started (by its PID, never by
 * name) and removes its directory once this process is gone, however it went: an `exit` hook does
 * not run when a test worker is itself SIGKILLed, and an orphaned server would outlive the run. It
 * ends by itself when the server does. `removeAfterMs` lets a server's own children go before the
 * directory is removed (a postmaster's backends).
 */
export function watchParent(serverPid: number, dir: string, removeAfterMs = 0): void {
  const script = `
    const [parent, server, dir, after] = process.argv.slice(1);
    const alive = (p) => { try { process.kill(Number(p), 0); return true; } catch (e) { return e.code === "EPERM"; } };
    setInterval(() => {
      if (!alive(server)) process.exit(0);
      if (!alive(parent)) {
        try { process.kill(Number(server), "SIGKILL"); } catch {}
        setTimeout(() => { require("node:fs").rmSync(dir, { recursive: true, force: true }); process.exit(0); }, Number(after));
      }
    }, 500);`;
  const w = spawn(
    process.execPath,
    ["-e", script, String(process.pid), String(serverPid), dir, String(removeAfterMs)],
    { stdio: "ignore", detached: true },
  );
  w.unref();
}
