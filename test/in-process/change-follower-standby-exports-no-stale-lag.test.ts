// wikiedge_change_follower_lag_seconds is the leader's: how far its last poll ended behind the
// wiki. A replica that lost the lease kept exporting its last lag as a leader for ever (exported
// with max across replicas and workers: a lag that no longer exists). A standby now exports 0
// (src/observe/change-metrics.ts state).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChangeFollower, MemoryCursorStore } from '../../src/invalidation/follower.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, startFakeWiki } from '../support/fake-recentchanges.js';

let wiki: FakeRecentChanges;
let server: FakeUpstream;
beforeAll(async () => {
  ({ wiki, upstream: server } = await startFakeWiki());
});
afterAll(() => server.close());

it('a replica that lost the lease exports no lag of its own', async () => {
  wiki.pageSize = 10;
  const registry = new Registry();
  let leader = true;
  let now = wiki.clock;
  const f = new ChangeFollower({
    upstream: new Upstream({ origin: new URL(server.url), connectTimeoutMs: 1_000, responseTimeoutMs: 2_000, connections: 2 }),
    apiPath: '/w/api.php',
    pollMs: 1_000,
    unhealthyAfterMs: 10_000,
    gapAfterMs: 60_000,
    maxLagMs: 60_000,
    pollBudgetMs: 600_000,
    requestTimeoutMs: 2_000,
    now: () => now,
    log: pino({ level: 'silent' }),
    metrics: new ChangeSignalMetrics(registry, { followerEnabled: true }),
    cursors: new MemoryCursorStore(),
    lease: { hold: () => Promise.resolve(leader), release: () => Promise.resolve() },
    apply: () => Promise.resolve(),
    expire: () => Promise.resolve(),
    namespaces: () => undefined,
  });
  const lag = async () => (await registry.getSingleMetric('wikiedge_change_follower_lag_seconds')!.get()).values[0]?.value;
  await f.pollOnce();
  const t0 = wiki.clock;
  wiki.addMany(1_000, 'B', (i) => t0 + i * 40);
  wiki.clock += 40_000;
  now += 40_000;
  // 400 of the 1,000 rows read (the page budget): behind.
  await f.pollOnce();
  expect(await lag()).toBeGreaterThan(0);
  leader = false;
  wiki.clock += 60_000;
  now += 60_000;
  await f.pollOnce();
  expect(await lag()).toBe(0);
  await f.stop();
});
