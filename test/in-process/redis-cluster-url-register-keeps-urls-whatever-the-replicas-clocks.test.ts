// On a Redis Cluster a prefix or pattern purge finds the URLs it removes in the URL register
// (src/cache/redis/cluster-writes.ts REGISTER_LUA), which each store joins and prunes of URLs
// whose entries have ended. When an entry ends was the storing replica's clock plus its lifetime,
// and the prune's cutoff the next storing replica's clock: a replica whose clock ran ahead took
// out URLs whose entries still lived, and a prefix purge never found them; Redis kept the
// entries, and every replica copied them back. Both are the register's master's clock now, a URL
// kept a while past its end (ENDED_KEPT_MS), as an index set's member is (JOIN_LUA).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { INDEX_SHARDS } from '../../src/cache/redis/keys.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const HOUR = 3_600_000;
const startCluster = REDIS_BACKENDS.find(([name]) => name.includes('Cluster'))![1];

const entry = (urlKey: string, now: number): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from('{}'),
  storedAt: now,
  ttlMs: HOUR,
  urlKey,
  modules: ['query'],
  slot: undefined,
  deps: ['*'],
});

describe.runIf(redisInstalled)('the URL register of a Redis Cluster, replicas whose clocks disagree', () => {
  let backend: RunningRedisBackend;
  const tiers: RedisTier[] = [];
  beforeAll(async () => {
    backend = await startCluster();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(tiers.map((t) => t.close()));
    await backend?.stop();
  });

  async function replica(keyPrefix: string, now: () => number): Promise<RedisTier> {
    const tier = backend.tier({ keyPrefix, timeoutMs: 2_000, now });
    tiers.push(tier);
    expect(await tier.ready(20_000)).toBe(true);
    return tier;
  }

  it('a URL one replica stored is found by a prefix purge after a replica two hours ahead stored others', async () => {
    const keyPrefix = `register:${randomUUID()}:`;
    const behind = await replica(keyPrefix, Date.now);
    const ahead = await replica(keyPrefix, () => Date.now() + 2 * HOUR);
    const kept = '/w/api.php?action=query&titles=Kept&format=json';
    const key = `${kept}\nanon\n-`;
    expect(await behind.set('shared', key, entry(kept, Date.now()))).toBe(true);
    // Enough stores that every part of the register is joined (and pruned) several times.
    for (let i = 0; i < INDEX_SHARDS * 8; i++) {
      const url = `/w/api.php?action=query&titles=Other${i}&format=json`;
      expect(await ahead.set('shared', `${url}\nanon\n-`, entry(url, Date.now() + 2 * HOUR))).toBe(true);
    }
    expect(await behind.get('shared', key)).toBeDefined();
    expect(await behind.purge({ kind: 'prefix', prefix: '/w/api.php?action=query&titles=Kept' })).toBe(1);
    expect(await behind.get('shared', key)).toBeUndefined();
  });
});
