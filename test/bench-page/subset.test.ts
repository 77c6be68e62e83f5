// `BENCH_ONLY=… npm run bench` keeps the sections of the benches it did not run (test/bench/lib/
// subset.mjs): each with its run date, and their lines in the page's lists of targets not met.
import { describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs of the bench, no types
import { benchSections, targetLines } from "../bench/lib/subset.mjs";

const PAGE = `# Benchmarks

Run: 2026-11-26T21:04:40.733Z

Targets not met in this run (idem is to be made faster there, never the baseline slower):

- executor: jobs/s enqueue -> executor: record

Targets not met that this machine cannot reach (their issues ended blocked; the reason with each):

- journal: record p50, FULL: the floor is 1.66x (issue 2)

## executor

| metric | idem |
|---|---:|
| jobs/s | 10 |

## journal

Run: 2026-11-20T10:00:00.000Z

| metric | idem |

<!-- peers:begin (written by npm run bench:peers; npm run bench keeps it) -->
## Peers: idem next to DBOS Transact and Restate
<!-- peers:end -->
`;

describe("the bench page's kept sections", () => {
  it("gives each bench's section with its own run date, else the page's, and never the peers'", () => {
    const s = benchSections(PAGE) as Map<string, string>;
    expect([...s.keys()]).toEqual(["executor", "journal"]);
    expect(s.get("executor")).toMatch(/^## executor\n\nRun: 2026-11-26T21:04:40.733Z\n/);
    expect(s.get("executor")).toContain("| jobs/s | 10 |");
    expect(s.get("journal")).toContain("Run: 2026-11-20T10:00:00.000Z");
    expect(s.get("journal")).not.toContain("2026-11-26");
    expect(s.get("journal")).not.toContain("peers");
  });

  it("keeps the target lines of the named benches only, in their list", () => {
    expect(targetLines(PAGE, ["journal"])).toEqual({
      missed: [],
      blocked: ["journal: record p50, FULL: the floor is 1.66x (issue 2)"],
    });
    expect(targetLines(PAGE, ["executor"])).toEqual({
      missed: ["executor: jobs/s enqueue -> executor: record"],
      blocked: [],
    });
  });
});
