// The Redis tier's index sets (P u:, P m:, P d:, P s:): a set that every store joins (a
// module's, the `*` tag's) lost no member when its entry ended, so under cache-busting traffic
// it grew without bound, its TTL renewed by every store (on a Redis Cluster until its memory
// was full: noeviction then refuses every write); and a purge by module read it whole (SMEMBERS)
// and deleted every entry in one script, blocking Redis for as long.
// Now each store prunes a few members whose entry ended: on one Redis, random members whose
// entry is gone (src/cache/redis/entries.ts STORE_LUA); on a cluster, where the entry is on
// another master, members whose entry's end (kept beside the set) is past
// (src/cache/redis/cluster-writes.ts JOIN_LUA). A purge or invalidation removes PURGE_BATCH
// entries per script call on one Redis.
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { INDEX_SHARDS, redisKeys } from '../../src/cache/redis/keys.js';
import { PURGE_BATCH } from '../../src/cache/redis/purges.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const PREFIX = 'bounded:';
/** On a cluster, how long after its end a member stays (ENDED_KEPT_MS, a minute in production). */
const ENDED_KEPT_MS = 200;

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('index sets on %s', (_name, start) => {
  let backend: RunningRedisBackend;
  let tier: RedisTier;
  let client: Redis | Cluster;
  let keys: ReturnType<typeof redisKeys>;

  beforeAll(async () => {
    backend = await start();
    keys = redisKeys(PREFIX, backend.cluster);
    tier = backend.tier({ keyPrefix: PREFIX, timeoutMs: 1_000, endedKeptMs: ENDED_KEPT_MS });
    expect(await tier.ready(10_000)).toBe(true);
    client = await backend.client();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await tier?.close();
    await backend?.stop();
  });

  /** The members of a module's or a tag's index: one set on one Redis, INDEX_SHARDS parts on a cluster. */
  const size = async (kind: 'module' | 'dep', name: string): Promise<number> => {
    if (!keys.cluster) return client.scard(kind === 'module' ? keys.module(name) : keys.dep(name));
    const parts = Array.from({ length: INDEX_SHARDS }, (_, n) => (kind === 'module' ? keys.modulePart(name, n) : keys.depPart(name, n)));
    const sizes = await Promise.all(parts.flatMap((k) => [client.scard(k), client.zcard(keys.endsOf(k))]));
    // A set and its ends hold the same members (pruned together).
    const sets = sizes.filter((_, i) => i % 2 === 0).reduce((a, b) => a + b, 0);
    const ends = sizes.filter((_, i) => i % 2 === 1).reduce((a, b) => a + b, 0);
    expect(ends).toBe(sets);
    return sets;
  };

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
    // 20 entries that live (the sets live as long as they do: on a cluster, every part holds
    // some), 200 that end at once (cache-busting answers), then 200 more that live.
    await store(20, 'busted', 600_000, 1_000);
    await store(200, 'busted', 300);
    // Past their end, and on a cluster past ENDED_KEPT_MS after it.
    await new Promise((r) => setTimeout(r, 300 + ENDED_KEPT_MS + 400));
    await store(200, 'busted', 600_000, 200);
    const moduleSet = await size('module', 'busted');
    const tagSet = await size('dep', 'tag-of-busted');
    // Without pruning both hold all 420; with 3 (one Redis) or 4 (a cluster) pruned per join, a
    // few of the 200 ended stay at most (on a cluster, a part is joined by about 1 in 8 stores).
    expect(moduleSet).toBeGreaterThanOrEqual(220);
    expect(moduleSet).toBeLessThan(270);
    expect(tagSet).toBeLessThan(270);
    // Every live entry is still a member: a purge by module still finds all of them.
    expect(await tier.purge({ kind: 'module', module: 'busted' })).toBe(220);
  }, 30_000);

  it('keep every member whose entry lives, however often they are pruned', async () => {
    // Entries that live, joined in the same sets by rounds of short-lived ones that end: pruning
    // runs at every join and never takes a live member, so a purge still finds every live entry.
    await store(50, 'mixed', 600_000);
    for (let round = 0; round < 3; round++) {
      await store(60, 'mixed', 100, 10_000 * (round + 1));
      await new Promise((r) => setTimeout(r, 100 + ENDED_KEPT_MS + 200));
    }
    await store(100, 'mixed', 600_000, 100_000);
    const members = await size('module', 'mixed');
    // 150 live and 180 ended joined. On a cluster the ended leave first (by their end): each
    // part was joined by about 27 stores after its first ended, 4 leaving at each. One Redis
    // tries 3 random members per store: fewer leave, but some do.
    expect(members).toBeLessThan(keys.cluster ? 150 + 20 : 330);
    expect(await tier.purge({ kind: 'module', module: 'mixed' })).toBe(150);
  }, 60_000);

  // One Redis sweeps in scripts (SWEEP_LUA); a cluster in steps (cluster-writes.ts sweep).
  it.runIf(_name === 'one Redis')(
    'are purged PURGE_BATCH entries per script call',
    async () => {
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
    },
    60_000,
  );
});
