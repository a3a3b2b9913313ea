// On a Redis Cluster a purge by module or tag (src/cache/redis/cluster-writes.ts sweep) read
// each part of the index whole (SMEMBERS), every member into one array here, before removing
// anything: a module every answer names has millions. Now each part is read with SSCAN, BATCH
// members at a time, their entries unlinked and the members removed before the next batch.
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { INDEX_SHARDS, redisKeys } from '../../src/cache/redis/keys.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const startCluster = REDIS_BACKENDS.find(([name]) => name === 'a Redis Cluster')![1];
const PREFIX = 'sweep:';

describe.runIf(redisInstalled)('a purge by module on a Redis Cluster', () => {
  let redis: RunningRedisBackend;
  let tier: RedisTier;
  let client: Cluster;

  beforeAll(async () => {
    redis = await startCluster();
    tier = redis.tier({ keyPrefix: PREFIX, timeoutMs: 1_000 });
    expect(await tier.ready(10_000)).toBe(true);
    client = (await redis.client()) as Cluster;
  }, 120_000);
  afterAll(async () => {
    client?.disconnect();
    await tier?.close();
    await redis?.stop();
  });

  /** Calls of `command` summed over the masters (INFO commandstats). */
  async function calls(command: string): Promise<number> {
    let n = 0;
    for (const node of client.nodes('master')) {
      n += Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(await node.info('commandstats'))?.[1] ?? 0);
    }
    return n;
  }

  it('reads each part of the index in batches and removes every entry', async () => {
    const n = 2_500;
    const entry = (url: string): CacheEntry => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{}'),
      storedAt: Date.now(),
      ttlMs: 600_000,
      urlKey: url,
      modules: ['huge'],
      slot: undefined,
      deps: [],
    });
    for (let i = 0; i < n; i += 50) {
      const stored = await Promise.all(
        Array.from({ length: 50 }, (_, k) => {
          const url = `/w/api.php?action=query&list=huge&n=${i + k}`;
          return tier.set('shared', `${url}\nanon\n-`, entry(url));
        }),
      );
      expect(stored.every(Boolean)).toBe(true);
    }
    const [sscans, smembers] = [await calls('sscan'), await calls('smembers')];
    expect(await tier.purge({ kind: 'module', module: 'huge' })).toBe(n);
    // Every part scanned (SSCAN, COUNT BATCH: as many calls as its size asks), none read whole.
    expect((await calls('sscan')) - sscans).toBeGreaterThanOrEqual(INDEX_SHARDS);
    expect((await calls('smembers')) - smembers).toBe(0);
    const keys = redisKeys(PREFIX, true);
    for (let part = 0; part < INDEX_SHARDS; part++) expect(await client.exists(keys.modulePart('huge', part))).toBe(0);
    expect(await tier.get('shared', '/w/api.php?action=query&list=huge&n=7\nanon\n-')).toBeUndefined();
  }, 120_000);
});
