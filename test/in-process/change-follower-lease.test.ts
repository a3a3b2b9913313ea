// Several replicas, one follower: the change follower's lease and cursor in a real redis-server
// and in a real Redis Cluster (src/cache/redis/follower-state.ts, test/support/redis-backends.ts), against a recentchanges stand-in. Only the replica that
// holds the lease reads recentchanges; the others are vouched for by its cursor's polledAt; when
// it stops the next replica takes over at once, when it dies (no release) once the lease has
// expired, and either way goes on from the cursor in Redis with no gap and nothing applied twice.
// Redis restarted empty: the follower leads again and misses nothing.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import type { Cursor } from '../../src/invalidation/follower.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges, type FollowerUnderTest, followerOf } from '../support/fake-recentchanges.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

/**
 * Real time in Redis (PX): long enough that a busy machine's pause between one replica's renewal
 * and the other's poll does not hand the lease over; one test waits it out.
 */
const LEASE_MS = 2_000;

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('one follower among replicas: the lease and cursor on %s', (_name, start) => {
  let redis: RunningRedisBackend;
  /** Each case its own key prefix (a FLUSHALL would have to reach every master of a cluster). */
  let keyPrefix = '';
  const wiki = new FakeRecentChanges();
  /** One listener per replica, all answering from the same wiki: who asked is who polled. */
  let servers: FakeUpstream[];
  let replicas: { tier: RedisTier; f: FollowerUnderTest; server: FakeUpstream }[] = [];

  beforeAll(async () => {
    redis = await start();
    servers = await Promise.all([0, 1, 2].map(() => startFakeUpstream(wiki.handler)));
  }, 120_000);
  afterAll(async () => {
    await Promise.all((servers ?? []).map((s) => s.close()));
    await redis?.stop();
  });
  beforeEach(async () => {
    keyPrefix = `lease:${randomUUID()}:`;
    wiki.rows.length = 0;
    wiki.add('History');
  });
  afterEach(async () => {
    await Promise.all(replicas.map(async (r) => (await r.f.close(), await r.tier.close())));
    replicas = [];
  });

  async function replica(i: number) {
    const tier = redis.tier({ keyPrefix });
    expect(await tier.ready(5_000)).toBe(true);
    const state = tier.followerState;
    const f = followerOf(servers[i]!.url, {
      now: wiki.clock,
      cursors: { load: async () => (await state.loadCursor()) as Cursor | undefined, save: (c) => state.saveCursor(c) },
      lease: { hold: () => state.holdLease(LEASE_MS), release: () => state.releaseLease() },
    });
    const r = { tier, f, server: servers[i]! };
    replicas.push(r);
    return r;
  }
  const rcAsked = (s: FakeUpstream) => s.requests.filter((r) => r.url?.includes('list=recentchanges')).length;
  const tick = async (...rs: { f: FollowerUnderTest }[]) => {
    for (const r of rs) await r.f.follower.pollOnce();
  };

  it('only the replica holding the lease reads recentchanges; the other is vouched for by it', async () => {
    const a = await replica(0);
    const b = await replica(1);
    const [askedA, askedB] = [rcAsked(a.server), rcAsked(b.server)];
    for (let i = 0; i < 5; i++) await tick(a, b);
    expect(a.f.follower.isLeader).toBe(true);
    expect(b.f.follower.isLeader).toBe(false);
    expect(rcAsked(a.server) - askedA).toBeGreaterThanOrEqual(5);
    expect(rcAsked(b.server) - askedB).toBe(0);
    expect(b.f.follower.healthy).toBe(true);
    wiki.add('Edited');
    await tick(a, b);
    expect(a.f.applied).toEqual(['Edited']);
    expect(b.f.applied).toEqual([]);
  });

  it('the leader stops (releases): the next replica takes over at once, from the cursor, no gap, nothing twice', async () => {
    const a = await replica(0);
    const b = await replica(1);
    await tick(a, b);
    wiki.add('Seen by A');
    await tick(a, b);
    await a.f.close();
    wiki.add('Seen by B');
    await tick(b);
    expect(b.f.follower.isLeader).toBe(true);
    expect(a.f.applied).toEqual(['Seen by A']);
    expect(b.f.applied).toEqual(['Seen by B']);
    expect(b.f.gaps).toEqual([]);
  });

  it('the leader dies (no release): another takes over once the lease has expired, no gap, nothing twice', async () => {
    const a = await replica(0);
    const b = await replica(1);
    await tick(a, b);
    wiki.add('Seen by A');
    await tick(a);
    // A is gone without a word: it polls no more, its lease is not released.
    wiki.add('After A died');
    await tick(b);
    expect(b.f.follower.isLeader).toBe(false);
    await sleep(LEASE_MS + 100);
    await tick(b);
    expect(b.f.follower.isLeader).toBe(true);
    expect(b.f.gaps).toEqual([]);
    expect(b.f.applied).toEqual(['After A died']);
    expect(rcAsked(b.server)).toBeGreaterThan(0);
  });

  it('a follower restarted (a new process) goes on from the cursor in Redis', async () => {
    const a = await replica(0);
    await tick(a);
    wiki.clock += 5_000;
    wiki.add('Before');
    await tick(a);
    await a.f.close();
    wiki.clock += 5_000;
    wiki.add('While restarting');
    const again = await replica(2);
    again.f.now = wiki.clock;
    await tick(again);
    expect(again.f.gaps).toEqual([]);
    expect(again.f.applied).toEqual(['While restarting']);
  });

  it('Redis restarted empty: the follower leads again, writes its cursor again, misses nothing', async () => {
    const a = await replica(0);
    await tick(a);
    await tick(a);
    expect(a.f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    await redis.restart();
    wiki.add('Across the restart');
    // Until the connection is back, the lease taken again (it went with the rest), the cursor
    // written again, and the row polled. Polled at least once after the restart: a cluster is
    // back (settled) by the time restart() returns, when the lease and cursor already look
    // right before the follower has read recentchanges again.
    // Either it kept its cursor across and applied the row, or it lost the lease meanwhile,
    // found no cursor in Redis and took a gap, which covers the row.
    const cursorBack = async () => a.f.follower.isLeader && (await a.tier.followerState.loadCursor().catch(() => undefined)) !== undefined;
    const covered = () => a.f.applied.includes('Across the restart') || (a.f.gaps.length === 2 && a.f.gaps[1]!.reason === 'cursor-lost');
    const deadline = Date.now() + 30_000;
    do {
      await tick(a);
      if (covered() && (await cursorBack())) break;
      await sleep(100);
    } while (Date.now() < deadline);
    expect(await cursorBack()).toBe(true);
    expect(covered()).toBe(true);
    wiki.add('After');
    await tick(a);
    expect(a.f.applied.filter((t) => t === 'After')).toHaveLength(1);
  });
});
