import { defineConfig } from 'vitest/config';

// Three projects: `unit` needs nothing but Node; `in-process` runs whole gateways against
// stand-ins (PHP and redis-server where a test starts its own, never the wiki); `integration`
// runs against a real MediaWiki (Debian's package under php -S), brought up once by
// test/integration/global-setup.ts.
export default defineConfig({
  test: {
    // The JSON report feeds scripts/test-summary.mjs (one closing line for CI).
    reporters: ['default', ['json', { outputFile: 'test-results.json' }]],
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        // Whole gateways in this process or spawned, against stand-ins (no wiki): real sockets,
        // real timers, so one file at a time.
        test: {
          name: 'in-process',
          include: ['test/in-process/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
