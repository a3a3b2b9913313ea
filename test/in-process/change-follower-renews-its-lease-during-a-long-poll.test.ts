// A poll reads at least past its cursor whatever the wiki's pages cost
// (change-follower-keeps-up-with-a-slow-busy-wiki.test.ts), so on a slow wiki it outlasted the
// lease (max(5 s, 5 polls), renewed at each poll's start): another replica took it and followed
// too, the leader's cursor save was skipped, and the lease passed back and forth with rows read
// twice. The lease is now renewed as the poll goes (follower.ts LEASE_RENEW_MS).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChangeFollower, type Cursor, type Lease } from '../../src/invalidation/follower.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges } from '../support/fake-recentchanges.js';

const LEASE_MS = 2_000;
const PAGE_MS = 400;
const wiki = new FakeRecentChanges();
wiki.pageSize = 10;
let slow: FakeUpstream;
let fast: FakeUpstream;
beforeAll(async () => {
  wiki.clock = Date.now();
  slow = await startFakeUpstream((req, res) => void setTimeout(() => wiki.handler(req, res), req.url?.includes('recentchanges') ? PAGE_MS : 0));
  fast = await startFakeUpstream(wiki.handler);
});
afterAll(async () => {
  await slow.close();
  await fast.close();
});

/** A lease as LEASE_LUA keeps it (src/cache/redis/follower-state.ts), on the real clock. */
const lease = { holder: undefined as string | undefined, until: 0 };
const leaseFor = (id: string): Lease => ({
  hold: () => {
    const now = Date.now();
    if (lease.holder === undefined || now > lease.until || lease.holder === id) {
      lease.holder = id;
      lease.until = now + LEASE_MS;
      return Promise.resolve(true);
    }
    return Promise.resolve(false);
  },
  release: () => {
    if (lease.holder === id) lease.holder = undefined;
    return Promise.resolve();
  },
});

it('a poll longer than the lease keeps it, and its cursor is saved', async () => {
  let stored: Cursor | undefined;
  const writers: string[] = [];
  const follower = (id: string, url: string) =>
    new ChangeFollower({
      upstream: new Upstream({ origin: new URL(url), connectTimeoutMs: 1_000, responseTimeoutMs: 30_000, connections: 2 }),
      apiPath: '/w/api.php',
      pollMs: 1_000,
      unhealthyAfterMs: 60_000,
      gapAfterMs: 600_000,
      requestTimeoutMs: 30_000,
      pollBudgetMs: 60_000,
      now: () => Date.now(),
      log: pino({ level: 'silent' }),
      metrics: new ChangeSignalMetrics(new Registry()),
      cursors: {
        load: () => Promise.resolve(stored),
        save: (c: Cursor) => {
          stored = c;
          writers.push(id);
          return Promise.resolve();
        },
      },
      lease: leaseFor(id),
      apply: () => Promise.resolve(),
      expire: () => Promise.resolve(),
      namespaces: () => undefined,
    });
  const a = follower('A', slow.url);
  const b = follower('B', fast.url);
  await a.pollOnce();
  expect(a.isLeader).toBe(true);
  writers.length = 0;
  // 12 pages of rows: about 5 s of pages at PAGE_MS, more than twice the lease.
  for (let i = 0; i < 120; i++) wiki.add(`Edit ${i}`, { at: Date.now() });
  const polling = a.pollOnce();
  // Past the lease's first term, while A still reads: B finds it held.
  await new Promise((r) => setTimeout(r, LEASE_MS + 800));
  await b.pollOnce();
  await polling;
  expect(b.isLeader).toBe(false);
  expect(writers).toEqual(['A']);
}, 60_000);
