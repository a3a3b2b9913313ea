// Redis restarted empty (no persistence) under two replicas, one following recentchanges and one
// standing by: the cursor each replica last wrote or read is written back
// (src/cache/redis/follower-state.ts), so whichever replica leads afterwards goes on from it. No
// cursor-lost gap (which would mark every replica's cache unvouched at once), and the row written
// while Redis was down is applied, once. On one redis-server and on a Redis Cluster whose every
// node restarted empty.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import type { Cursor } from '../../src/invalidation/follower.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges, type FollowerUnderTest, followerOf } from '../support/fake-recentchanges.js';
import { bareRedisTier, startRedis } from '../support/redis.js';
import { startCluster } from '../support/redis-cluster.js';

const LEASE_MS = 2_000;

interface Shared {
  tier(): RedisTier;
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
}

const BACKENDS: [string, () => Promise<Shared>][] = [
  [
    'one redis-server',
    async () => {
      const redis = await startRedis();
      return { tier: () => bareRedisTier(redis.url, { timeoutMs: 2_000 }), restartEmpty: () => redis.restart(), stop: () => redis.stop() };
    },
  ],
  [
    'a Redis Cluster',
    async () => {
      const cluster = await startCluster();
      const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
      return {
        tier: () => bareRedisTier('', { timeoutMs: 2_000, target: { kind: 'cluster', nodes, username: '', password: '', tls: false } }),
        restartEmpty: () => cluster.restart(),
        stop: () => cluster.stop(),
      };
    },
  ],
];

describe.each(BACKENDS)('the follower across a restart of %s', (_name, start) => {
  let shared: Shared;
  const wiki = new FakeRecentChanges();
  let servers: FakeUpstream[];
  let replicas: { tier: RedisTier; f: FollowerUnderTest }[] = [];

  beforeAll(async () => {
    shared = await start();
    servers = await Promise.all([0, 1].map(() => startFakeUpstream(wiki.handler)));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await shared.stop();
  });
  afterEach(async () => {
    await Promise.all(replicas.map(async (r) => (await r.f.close(), await r.tier.close())));
    replicas = [];
  });

  async function replica(i: number) {
    const tier = shared.tier();
    expect(await tier.ready(20_000)).toBe(true);
    const state = tier.followerState;
    const f = followerOf(servers[i]!.url, {
      now: wiki.clock,
      cursors: { load: async () => (await state.loadCursor()) as Cursor | undefined, save: (c) => state.saveCursor(c) },
      lease: { hold: () => state.holdLease(LEASE_MS), release: () => state.releaseLease() },
    });
    const r = { tier, f };
    replicas.push(r);
    return r;
  }

  it('no cursor-lost gap after the restart, and the row written meanwhile applied once', async () => {
    wiki.add('History');
    const a = await replica(0);
    const b = await replica(1);
    await a.f.follower.pollOnce();
    await b.f.follower.pollOnce();
    wiki.add('Before the restart');
    await a.f.follower.pollOnce();
    await b.f.follower.pollOnce();
    expect(a.f.follower.isLeader).toBe(true);
    expect(a.f.applied).toEqual(['Before the restart']);
    // The first start had no cursor anywhere: that gap, and only it.
    expect([...a.f.gaps, ...b.f.gaps].map((g) => g.reason)).toEqual(['cursor-lost']);

    await shared.restartEmpty();
    wiki.add('While Redis was down');
    // Both poll until one leads again and the cursor is back in Redis.
    const back = async () => (a.f.follower.isLeader || b.f.follower.isLeader) && (await a.tier.followerState.loadCursor().catch(() => undefined)) !== undefined;
    const deadline = Date.now() + 30_000;
    while (!(await back()) && Date.now() < deadline) {
      await a.f.follower.pollOnce();
      await b.f.follower.pollOnce();
      await sleep(100);
    }
    expect(await back()).toBe(true);
    // Polled until the row is applied: on a cluster a node may still be loading when the cursor
    // is already back, and a poll that cannot reach it applies nothing (and is no gap).
    const appliedOf = (title: string) => [...a.f.applied, ...b.f.applied].filter((t) => t === title).length;
    const pollUntilApplied = async (title: string) => {
      const until = Date.now() + 30_000;
      do {
        await a.f.follower.pollOnce();
        await b.f.follower.pollOnce();
        if (appliedOf(title) > 0) return;
        await sleep(100);
      } while (Date.now() < until);
    };
    await pollUntilApplied('While Redis was down');

    expect([...a.f.gaps, ...b.f.gaps].map((g) => g.reason)).toEqual(['cursor-lost']);
    expect(appliedOf('While Redis was down')).toBe(1);
    wiki.add('After');
    await pollUntilApplied('After');
    expect(appliedOf('After')).toBe(1);
  });
});
