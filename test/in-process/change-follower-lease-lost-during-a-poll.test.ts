// Only one replica follows (a lease in Redis, max(5 s, 5 polls), renewed at each poll's start).
// A poll may take as long as the wiki takes to answer one page (up to the upstream timeout, 30 s by
// default): another replica took the expired lease meanwhile and followed too, and both wrote the
// cursor. The follower now renews the lease before it writes its cursor, and one that lost it
// leaves the cursor to the new leader (src/invalidation/follower.ts follow).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChangeFollower, type Cursor, type Lease } from '../../src/invalidation/follower.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges } from '../support/fake-recentchanges.js';

const LEASE_MS = 2_000;
const wiki = new FakeRecentChanges();
let slow: FakeUpstream;
let fast: FakeUpstream;
let slowMs = 0;
beforeAll(async () => {
  wiki.clock = Date.now();
  slow = await startFakeUpstream((req, res) => void setTimeout(() => wiki.handler(req, res), req.url?.includes('recentchanges') ? slowMs : 0));
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

it('a poll that outlasts the lease leaves the cursor to the replica that took it', async () => {
  let stored: Cursor | undefined;
  const writers: string[] = [];
  const follower = (id: string, url: string) =>
    new ChangeFollower({
      upstream: new Upstream({ origin: new URL(url), connectTimeoutMs: 1_000, responseTimeoutMs: 30_000, connections: 2 }),
      apiPath: '/w/api.php',
      pollMs: 1_000,
      unhealthyAfterMs: 10_000,
      gapAfterMs: 60_000,
      requestTimeoutMs: 30_000,
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
  await b.pollOnce();
  expect([a.isLeader, b.isLeader]).toEqual([true, false]);
  for (let i = 0; i < 3; i++) wiki.add(`Edit ${i}`, { at: Date.now() });
  wiki.clock = Date.now();
  // A's next page takes longer than the lease.
  slowMs = LEASE_MS + 1_000;
  const polling = a.pollOnce();
  await new Promise((r) => setTimeout(r, LEASE_MS + 300));
  await b.pollOnce();
  expect(b.isLeader).toBe(true);
  writers.length = 0;
  await polling;
  expect(a.isLeader).toBe(false);
  expect(writers).not.toContain('A');
  await a.stop();
  await b.stop();
}, 30_000);
