import { defineConfig } from "vitest/config";

// Workspace packages resolve to their src through the "@idem/source" export condition, so tests need
// no build; suites that start real child processes (idem, interpreter) use the built dist.
export default defineConfig({
  resolve: { conditions: ["@idem/source"] },
  ssr: { resolve: { conditions: ["@idem/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**", "test/bench/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two workers on this 2-core machine: the suites wait on processes and fsync more than on CPU.
    maxWorkers: 2,
  },
});
