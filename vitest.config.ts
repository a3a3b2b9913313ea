import { defineConfig } from 'vitest/config';

// Two projects: `unit` needs nothing but Node; `integration` runs against a real MediaWiki
// (Debian's package under php -S), brought up once by test/integration/global-setup.ts.
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
