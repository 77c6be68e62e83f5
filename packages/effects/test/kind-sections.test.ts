import { parseConfig } from "@idem/schema";
import { describe, expect, it } from "vitest";
import { branchAllowed, namedBranches } from "../../git/src/branch-names.js";
import type { GitRepos } from "../../git/src/git-config.js";
import {
  BUILT_IN_KINDS,
  kindRegistryOf,
  kindSectionIssues,
  kindSectionNames,
} from "../src/index.js";

/** A config's JSON loaded as idem's processes load it: its kinds' sections parsed by the kinds. */
function load(raw: unknown, options: { dir: string }) {
  const r = parseConfig(raw, { ...options, sections: kindSectionNames(BUILT_IN_KINDS) });
  if (!r.ok) return r;
  const issues = kindSectionIssues(r.config, BUILT_IN_KINDS);
  return issues.length > 0 ? { ok: false as const, issues } : r;
}

/** The git kinds' options (the `repos` section, resolved) of a loaded config. */
function repos(r: ReturnType<typeof load>): GitRepos {
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return kindRegistryOf(r.config, BUILT_IN_KINDS).options("git.commit") as GitRepos;
}

describe("the repos section, owned by the git kinds", () => {
  it("takes branch patterns (a branch per job) in branches, and refuses a pattern that is not one", () => {
    const ok = load(
      { repos: { a: { url: "file:///srv/a.git", branches: ["idem/*", "pr-*", "release"] } } },
      { dir: "/" },
    );
    const repo = repos(ok).a as { branch: string; branches: string[] };
    expect(["main", "idem/job-1", "pr-7", "release"].map((b) => branchAllowed(repo, b))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(
      ["idem/", "idem", "pr-", "releases", "other/x"].map((b) => branchAllowed(repo, b)),
    ).toEqual([false, false, false, false, false]);
    expect(namedBranches(repo)).toEqual(["main", "release"]);
    for (const bad of ["*", "a*b*", "-x*", "a..*"]) {
      const r = load({ repos: { a: { path: "a", branches: [bad] } } }, { dir: "/" });
      expect(r.ok, bad).toBe(false);
      if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.branches.0");
    }
    expect(load({ repos: { a: { path: "a", branch: "idem/*" } } }, { dir: "/" }).ok).toBe(false);
  });

  it("resolves a repo's path against the config folder and fills its defaults", () => {
    const r = load({ repos: { site: { path: "repos/site" } } }, { dir: "/srv/idem" });
    expect(r.ok).toBe(true);
    expect(repos(r).site?.path).toBe("/srv/idem/repos/site");
    expect(repos(r).site?.branch).toBe("main");
  });

  it("refuses an option-like branch", () => {
    const r = load({ repos: { a: { path: "a", branch: "--upload-pack=x" } } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.branch");
  });

  it("takes a repo on a server by url, with a per-host mirror inside .idem by default", () => {
    const r = load(
      {
        repos: {
          site: { url: "ssh://git@example.com/org/site.git" },
          docs: { url: "../shared/docs.git", cacheDir: "/var/cache/idem/docs" },
        },
      },
      { dir: "/srv/idem" },
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(repos(r).site?.url).toBe("ssh://git@example.com/org/site.git");
    expect(repos(r).site?.cacheDir).toBe("/srv/idem/.idem/mirrors/site.git");
    expect(repos(r).docs?.url).toBe("/srv/shared/docs.git");
    expect(repos(r).docs?.cacheDir).toBe("/var/cache/idem/docs");
  });

  it("wants exactly one of path and url, and a cacheDir only beside a url", () => {
    const r = load(
      {
        repos: {
          both: { path: "a", url: "git://h/a.git" },
          none: { branch: "main" },
          odd: { path: "a", cacheDir: "c" },
        },
      },
      { dir: "/" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual([
      "repos.both",
      "repos.none",
      "repos.odd.cacheDir",
    ]);
  });

  it("refuses a url with a password and never repeats it", () => {
    const r = load({ repos: { a: { url: "https://bob:s3cret@example.com/a.git" } } }, { dir: "/" });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues[0]?.path).toBe("repos.a.url");
    expect(r.issues[0]?.message).toMatch(/password/);
    expect(JSON.stringify(r.issues)).not.toContain("s3cret");
  });

  it("refuses an option-like url and an unknown scheme", () => {
    for (const url of ["--upload-pack=touch /tmp/x", "ftp://example.com/a.git", "https://"]) {
      const r = load({ repos: { a: { url } } }, { dir: "/" });
      expect(r.ok, url).toBe(false);
      if (!r.ok) expect(r.issues[0]?.path).toBe("repos.a.url");
    }
    for (const url of [
      "git@example.com:org/a.git",
      "file:///srv/a.git",
      "git://127.0.0.1:9418/a",
    ]) {
      expect(load({ repos: { a: { url } } }, { dir: "/" }).ok, url).toBe(true);
    }
  });
});

describe("the http section, owned by http.request", () => {
  it("refuses credentials in a target's URLs where fetch can never send them, naming the key and never the secret", () => {
    const r = load(
      {
        http: {
          targets: {
            hooks: {
              baseUrl: "https://svc:Sup3rSecret@hooks.example",
              probeUrl: "https://svc:Sup3rSecret@hooks.example/probe/{key}",
            },
          },
        },
      },
      { dir: "/" },
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.map((i) => i.path).sort()).toEqual([
      "http.targets.hooks.baseUrl",
      "http.targets.hooks.probeUrl",
    ]);
    expect(JSON.stringify(r.issues)).not.toContain("Sup3rSecret");
  });

  it("wants a probeUrl that is an http(s) URL or a path under baseUrl", () => {
    const r = load(
      { http: { targets: { t: { baseUrl: "http://127.0.0.1:1", probeUrl: "ftp://x/{key}" } } } },
      { dir: "/" },
    );
    expect(r.ok ? [] : r.issues.map((i) => i.path)).toEqual(["http.targets.t.probeUrl"]);
  });
});

describe("a section no kind owns", () => {
  it("is refused as an unknown key, as idem's own sections refuse one", () => {
    const r = load({ repoz: { site: { path: "x" } } }, { dir: "/" });
    expect(r.ok ? [] : r.issues).toEqual([{ path: "", message: 'Unrecognized key: "repoz"' }]);
  });
});
