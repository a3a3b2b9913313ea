// The Redis tier's index sets (P u:, P m:, P d:, P s:) on one Redis: a set that every store
// joins (a module's, the `*` tag's) lost no member when its entry ended, so under cache-busting
// traffic it grew without bound, its TTL renewed by every store; and a purge by module read it
// whole (SMEMBERS) and deleted every entry in one script, blocking Redis for as long.
// Now each store prunes a few random members whose entry ended (src/cache/redis/entries.ts
// STORE_LUA), and a purge or invalidation removes PURGE_BATCH entries per script call.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { PURGE_BATCH } from '../../src/cache/redis/purges.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';

const PREFIX = 'bounded:';
const keys = redisKeys(PREFIX);

describe.runIf(redisInstalled)('index sets on one Redis', () => {
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

  const entry = (url: string, module: string, ttlMs: number): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{}'),
    storedAt: Date.now(),
    ttlMs,
    urlKey: url,
    modules: [module],
    slot: undefined,
    deps: [`tag-of-${module}`],
  });
  const store = async (n: number, module: string, ttlMs: number, from = 0) => {
    for (let i = from; i < from + n; i++) {
      const url = `/w/api.php?action=query&list=${module}&bust=${i}`;
      expect(await tier.set('shared', `${url}\nanon\n-`, entry(url, module, ttlMs))).toBe(true);
    }
  };

  it('lose the members whose entries ended as later entries join them', async () => {
    // One entry that lives (the sets live as long as it), 200 that end at once (cache-busting
    // answers), then 200 more that live.
    await store(1, 'busted', 600_000, 1_000);
    await store(200, 'busted', 300);
    await new Promise((r) => setTimeout(r, 600));
    await store(200, 'busted', 600_000, 200);
    const moduleSet = await client.scard(keys.module('busted'));
    const tagSet = await client.scard(keys.dep('tag-of-busted'));
    // Without pruning both hold all 401; with PRUNE_PER_SET = 3 a few of the 200 ended stay.
    expect(moduleSet).toBeGreaterThanOrEqual(201);
    expect(moduleSet).toBeLessThan(251);
    expect(tagSet).toBeLessThan(251);
    // Every live entry is still a member: a purge by module still finds all of them.
    expect(await tier.purge({ kind: 'module', module: 'busted' })).toBe(201);
  }, 30_000);

  it('are purged PURGE_BATCH entries per script call', async () => {
    const n = 2 * PURGE_BATCH + 500;
    await store(n, 'huge', 600_000);
    // Script calls (EVALSHA, or EVAL the first time ioredis sends a script).
    const calls = async () => {
      const stats = await client.info('commandstats');
      return ['evalsha', 'eval'].reduce((sum, c) => sum + Number(new RegExp(`cmdstat_${c}:calls=(\\d+)`).exec(stats)?.[1] ?? 0), 0);
    };
    const before = await calls();
    expect(await tier.purge({ kind: 'module', module: 'huge' })).toBe(n);
    expect((await calls()) - before).toBeGreaterThanOrEqual(3);
    expect(await client.exists(keys.module('huge'))).toBe(0);
    expect(await client.keys(`${PREFIX}e:*`)).toEqual([]);

    // An invalidation by tag alike.
    await store(n, 'tagged', 600_000);
    const beforeTags = await calls();
    expect(await tier.purge({ kind: 'tags', tags: ['tag-of-tagged'] })).toBe(n);
    expect((await calls()) - beforeTags).toBeGreaterThanOrEqual(3);
    expect(await client.exists(keys.dep('tag-of-tagged'))).toBe(0);
  }, 60_000);
});
