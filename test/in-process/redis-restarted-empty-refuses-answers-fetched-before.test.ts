// The store guard (src/cache/redis/entries.ts STORE_LUA, cluster-writes.ts step 3): an answer is
// written only if none of its tags was invalidated after the fetch's mark (vseq before asking
// the wiki). A Redis that restarted empty (or, on a cluster, the master of the global keys) numbers
// its invalidations from 0 again, below every mark taken before: an answer fetched before the
// restart and stored after an invalidation made after it passed the guard, its tag's number
// below its mark, and was kept as fresh. A sequence below the mark now vouches for nothing.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';

const PREFIX = 'restarted:';
const keys = redisKeys(PREFIX);
const URL_KEY = '/w/api.php?action=query&titles=Restarted&format=json';
const KEY = `${URL_KEY}\nanon\n-`;

describe.runIf(redisInstalled)('one Redis that restarted empty while an answer was fetched', () => {
  let redis: TestRedis;
  let tier: RedisTier;
  let client: Redis;

  beforeAll(async () => {
    redis = await startRedis();
    tier = bareRedisTier(redis.url, { keyPrefix: PREFIX, timeoutMs: 1_000 });
    expect(await tier.ready(5_000)).toBe(true);
    client = new Redis(redis.url);
  }, 30_000);
  afterAll(async () => {
    client?.disconnect();
    await tier?.close();
    await redis?.stop();
  });

  const entry = (): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"old":true}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: URL_KEY,
    modules: ['query'],
    slot: undefined,
    deps: ['p:Restarted'],
  });

  it('refuses the answer whose mark is above the sequence', async () => {
    // Invalidations before the restart: the mark the fetch notes is 1000.
    await client.set(keys.invalidationSeq, '1000');
    const mark = await tier.invalidationMark();
    expect(mark).toBe(1000);
    // The restart (everything gone), then an edit of the page: invalidation number 1.
    await client.flushall();
    expect(await tier.purge({ kind: 'tags', tags: ['p:Restarted'] })).toBe(0);
    expect(await tier.set('shared', KEY, entry(), mark)).toBe(false);
    expect(await tier.get('shared', KEY)).toBeUndefined();
  });

  it('keeps an answer whose mark is the sequence (nothing happened since)', async () => {
    const mark = await tier.invalidationMark();
    expect(await tier.set('shared', KEY, entry(), mark)).toBe(true);
  });
});
