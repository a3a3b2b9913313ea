// A purge in a cluster with Redis (cache/purge.ts purgeEverywhere): the other workers of this
// replica hear it on Redis's channel, and over IPC when Redis cannot carry it (down, or its
// publish failed); never twice over.
import { describe, expect, it } from 'vitest';
import type { PurgeMessage } from '../../src/cache/purge.js';
import { purgeEverywhere } from '../../src/cache/purge.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { CacheStore } from '../../src/cache/store.js';

const store = () => new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
const redisAnswering = (removed: number | null) => ({ purge: () => Promise.resolve(removed) }) as unknown as RedisTier;
const message: PurgeMessage = { kind: 'url', urlKey: '/w/api.php?action=query&format=json&list=allpages' };

describe('a purge in a cluster with Redis', () => {
  it('reaches the other workers over IPC when Redis could not carry it', async () => {
    const told: PurgeMessage[] = [];
    const result = await purgeEverywhere(store(), redisAnswering(null), message, { publish: (m) => told.push(m) });
    expect(result.redisPurged).toBeNull();
    expect(told).toEqual([message]);
  });

  it('is left to Redis’s channel when Redis carried it', async () => {
    const told: PurgeMessage[] = [];
    const result = await purgeEverywhere(store(), redisAnswering(3), message, { publish: (m) => told.push(m) });
    expect(result.redisPurged).toBe(3);
    expect(told).toEqual([]);
  });
});
