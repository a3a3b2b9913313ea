// wikiedge_change_follower_up was set at the end of each poll only, while the TTL decision
// (invalidation/signals.ts) reads the follower's `healthy` as it is now: through a poll that
// outlasted the unhealthy time (a long apply, a slow wiki) the gauge said 1 while the short TTL
// defaults applied, and after the follower stopped it kept saying 1 (and leader 1) for as long
// as the registry was scraped. Now it is read when scraped (src/observe/change-metrics.ts), and
// a stopped follower says 0, for up and leader alike.
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

it('up is the health the TTL decision reads, during a long poll and after the follower stopped', async () => {
  const registry = new Registry();
  const unhealthyAfterMs = 10_000;
  let now = wiki.clock;
  const during: { apply?: () => Promise<void> } = {};
  const upstream = new Upstream({ origin: new URL(server.url), connectTimeoutMs: 1_000, responseTimeoutMs: 2_000, connections: 2 });
  const f = new ChangeFollower({
    upstream,
    apiPath: '/w/api.php',
    pollMs: 1_000,
    unhealthyAfterMs,
    gapAfterMs: 60_000,
    pollBudgetMs: 600_000,
    requestTimeoutMs: 2_000,
    now: () => now,
    log: pino({ level: 'silent' }),
    metrics: new ChangeSignalMetrics(registry, { followerEnabled: true }),
    cursors: new MemoryCursorStore(),
    lease: { hold: () => Promise.resolve(true), release: () => Promise.resolve() },
    apply: async () => {
      await during.apply?.();
    },
    expire: () => Promise.resolve(),
    namespaces: () => undefined,
  });
  const gauge = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]?.value;
  const up = () => gauge('wikiedge_change_follower_up');
  await f.pollOnce();
  expect(f.healthy).toBe(true);
  expect(await up()).toBe(1);

  // A poll whose apply outlasts the unhealthy time: scraped meanwhile, up says what the TTLs read.
  let scraped: { healthy: boolean; up: number | undefined } | undefined;
  during.apply = async () => {
    now += unhealthyAfterMs + 1_000;
    scraped = { healthy: f.healthy, up: await up() };
  };
  wiki.clock += 1_000;
  wiki.add('Edited');
  await f.pollOnce();
  expect(scraped).toEqual({ healthy: false, up: 0 });
  // The poll ended: it vouches again.
  expect(f.healthy).toBe(true);
  expect(await up()).toBe(1);

  // Nobody polls for longer than the unhealthy time: up says so without a poll.
  now += unhealthyAfterMs + 1_000;
  expect(f.healthy).toBe(false);
  expect(await up()).toBe(0);
  now -= unhealthyAfterMs + 1_000;
  expect(await up()).toBe(1);
  expect(await gauge('wikiedge_change_follower_leader')).toBe(1);

  // Stopped: neither up nor leader, whatever it vouched last.
  await f.stop();
  await upstream.close();
  expect(await up()).toBe(0);
  expect(await gauge('wikiedge_change_follower_leader')).toBe(0);
});
