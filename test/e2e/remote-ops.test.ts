// The operations on a git target on a server, through the built CLI: doctor (the remote answers,
// the branch exists, the mirror is healthy), the interpreter pushing, audit (one fetch, then the
// scan of the mirror at the remote's tip), replay --dry-run, and the runbook's force-push: the
// audit names the lost effects as drift and the replay plans to apply them again.
import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type GitDaemonHandle, startGitDaemon } from "@idem/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gitIn, idem, workspace } from "../../apps/cli/test/ops-helpers.js";
import { REPO_ROOT } from "../chaos/interpreter-fixture.js";

let daemon: GitDaemonHandle;
beforeAll(async () => {
  execFileSync("npx", ["tsc", "-b", "apps/cli"], { cwd: REPO_ROOT, stdio: "ignore" });
  daemon = await startGitDaemon();
});
afterAll(async () => {
  await daemon?.stop();
});

interface Findings {
  findings: { severity: string; key: string; finding: string }[];
}
const repoFindings = (out: string) =>
  (JSON.parse(out) as Findings).findings.filter((f) => f.key.startsWith("repos."));

describe("idem on a remote git target", () => {
  it("doctor, interpreter, audit and replay --dry-run work against the remote, force-push included", async () => {
    const site = daemon.createRepo("ops-site");
    const ws = workspace({ repos: { site: { url: site.url } } });
    try {
      const doctor = await idem(["doctor", "--json", "--config", ws.config]);
      expect(repoFindings(doctor.stdout)).toEqual([]);

      const output = {
        jobId: "remote-1",
        agent: "writer",
        effects: [1, 2].map((i) => ({
          kind: "git.commit",
          repo: "site",
          message: `remote ${i}`,
          files: [{ path: `r/${i}.txt`, content: `${i}\n` }],
        })),
      };
      const file = join(ws.dir, "out.json");
      writeFileSync(file, JSON.stringify(output));
      const submitted = await idem(["submit", file, "--json", "--config", ws.config]);
      expect(submitted.code, submitted.stderr).toBe(0);
      const ran = await idem(["interpreter", "--once", "--config", ws.config], {
        timeoutMs: 120_000,
      });
      expect(ran.code, ran.stderr).toBe(0);
      expect(gitIn(site.path, "log", "--format=%s", "main")).toContain("remote 2");

      const audit = await idem(["audit", "--json", "--config", ws.config]);
      expect(audit.code, audit.stderr).toBe(0);
      expect(JSON.parse(audit.stdout)).toMatchObject({
        duplicates: [],
        drift: [],
        effects: { applied: 2 },
      });
      const plan = await idem(["replay", "--all", "--dry-run", "--json", "--config", ws.config]);
      expect(plan.code, plan.stderr).toBe(0);
      expect(JSON.parse(plan.stdout).summary).toMatchObject({ apply: 0, skip: 2 });

      // The mirror exists now and is healthy.
      const again = await idem(["doctor", "--json", "--config", ws.config]);
      expect(repoFindings(again.stdout)).toEqual([]);

      // The remote is force-pushed back to its first commit: both effects are gone from it.
      const first = gitIn(site.path, "rev-list", "--max-parents=0", "main").trim();
      gitIn(site.path, "update-ref", "refs/heads/main", first);
      const drift = await idem(["audit", "--json", "--config", ws.config]);
      expect(drift.code).toBe(3);
      expect(
        (JSON.parse(drift.stdout) as { drift: { key: string }[] }).drift.map((d) => d.key).sort(),
      ).toEqual(["remote-1/0", "remote-1/1"]);
      const replan = await idem(["replay", "--all", "--dry-run", "--json", "--config", ws.config]);
      expect(JSON.parse(replan.stdout).summary).toMatchObject({ apply: 2, skip: 0 });

      // A damaged mirror is named, with the fix.
      rmSync(join(ws.dir, ".idem/mirrors/site.git/objects"), { recursive: true, force: true });
      const broken = await idem(["doctor", "--json", "--config", ws.config]);
      expect(broken.code).toBe(3);
      expect(repoFindings(broken.stdout).map((f) => f.key)).toContain("repos.site.cacheDir");
    } finally {
      ws.remove();
    }
  });

  it("idem interpreter honours IDEM_FAULT=interpreter.after-push: killed after the push, the next one records present", async () => {
    const site = daemon.createRepo("ops-fault");
    const ws = workspace({ repos: { site: { url: site.url } }, interpreter: { leaseMs: 1000 } });
    try {
      const file = join(ws.dir, "out.json");
      writeFileSync(
        file,
        JSON.stringify({
          jobId: "pushed-1",
          agent: "writer",
          effects: [
            {
              kind: "git.commit",
              repo: "site",
              message: "pushed",
              files: [{ path: "p.txt", content: "p\n" }],
            },
          ],
        }),
      );
      expect((await idem(["submit", file, "--config", ws.config])).code).toBe(0);
      const killed = await idem(["interpreter", "--once", "--config", ws.config], {
        env: { IDEM_FAULT: "interpreter.after-push" },
        timeoutMs: 120_000,
      });
      expect(killed.code, killed.stderr).not.toBe(0);
      expect(gitIn(site.path, "log", "--format=%s", "main")).toContain("pushed");
      const fresh = await idem(["interpreter", "--once", "--config", ws.config], {
        timeoutMs: 120_000,
      });
      expect(fresh.code, fresh.stderr).toBe(0);
      const show = await idem(["show", "pushed-1", "--json", "--config", ws.config]);
      expect(show.stdout).toContain('"present"');
      expect(
        gitIn(site.path, "log", "--format=%B", "main").match(/^Idem-Effect: pushed-1\/0$/gm),
      ).toHaveLength(1);
    } finally {
      ws.remove();
    }
  });

  it("doctor names a remote that does not answer and a branch the remote lacks", async () => {
    const site = daemon.createRepo("ops-branchless");
    const ws = workspace({
      repos: {
        site: { url: site.url, branch: "release" },
        gone: { url: `${daemon.url}/does-not-exist.git` },
      },
    });
    try {
      const doctor = await idem(["doctor", "--json", "--config", ws.config]);
      expect(doctor.code).toBe(3);
      const keys = repoFindings(doctor.stdout).map((f) => f.key);
      expect(keys).toContain("repos.site.branch");
      expect(keys).toContain("repos.gone.url");
    } finally {
      ws.remove();
    }
  });

  it("refuses a URL with a password at load, naming the key and never printing the password", async () => {
    const ws = workspace({ repos: { site: { url: "https://bob:s3cret@example.com/site.git" } } });
    try {
      const doctor = await idem(["doctor", "--json", "--config", ws.config]);
      expect(doctor.code).toBe(2);
      expect(doctor.stderr + doctor.stdout).toContain("repos.site.url");
      expect(doctor.stderr + doctor.stdout).not.toContain("s3cret");
    } finally {
      ws.remove();
    }
  });
});
