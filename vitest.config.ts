import { defineConfig } from 'vitest/config';

// Three projects: `unit` needs nothing but Node; `in-process` runs whole gateways against
// stand-ins (PHP and redis-server where a test starts its own, never the wiki); `integration`
// runs against a real MediaWiki (Debian's package under php -S), brought up once by
// test/integration/global-setup.ts.
export default defineConfig({
  test: {
    // One known stray rejection, ignored by its exact shape and nothing else: ioredis' "Connection
    // is closed." when test/in-process/storage-contract.test.ts kills its redis-server on purpose
    // ("the shared tier down"), seen in 2 of 3 CI runs with every assertion passing. Which client
    // promise goes unhandled was not found yet (RedisConnection.call handles its own); until it
    // is, the rule is narrow: any other unhandled error still fails the run.
    onUnhandledError(error) {
      const e = error as { message?: string; stack?: string };
      return !(e?.message === 'Connection is closed.' && (e.stack ?? '').includes('ioredis'));
    },
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
