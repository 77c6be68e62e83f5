import { defineConfig } from "vitest/config";

// Workspace packages resolve to their src through the "@idem/source" export condition, so tests need
// no build; suites that start real child processes (idem, interpreter) use the built dist.
export default defineConfig({
  resolve: { conditions: ["@idem/source"] },
  ssr: { resolve: { conditions: ["@idem/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "test/bench/**"],
    // Bounds a hung test, never a slow one: the suites spawn processes, fsync and wait on servers,
    // and on a busy machine a passing test can take minutes. A test that waits for something
    // names it (its own, shorter bound) rather than reaching this one.
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: "forks",
    // A worker's files share its module cache (no fresh import graph per file): the suites import
    // the sources of many packages, and importing them again for each of ~320 files was about half
    // of a package suite's time (packages/core: 85 s isolated, 42 s shared, on a busy machine). No
    // test mocks modules or fakes timers; state a test sets up is its own (temp dirs, servers).
    isolate: false,
    // Two workers on this 2-core machine: the suites wait on processes and fsync more than on CPU.
    maxWorkers: 2,
    // After vitest's own summary: each reason a test was skipped for (test/support/skip.ts), with
    // the files and counts.
    reporters: ["default", "./test/support/skip-summary-reporter.ts"],
  },
});
