// The fetch lock lets one replica fetch a key while the others wait for its entry; its script
// gives the lock back at once when a fetch already finished, which it judged by the entry's
// PTTL alone. After a gap (Redis' `stale-before`), an entry stored before it keeps its PTTL yet
// is stale on every replica: each was told "already fetched", found the entry stale, saw no lock
// and fetched, every replica each key. Such an entry is not a fetch already finished now
// (src/cache/redis/locks.ts LOCK_LUA reads the entry's storedAt against the mark), on one Redis
// and on a Redis Cluster (the lock and its entry in one hash slot).
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import type { SharedTierHooks } from '../../src/cache/storage.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

function entry(urlKey: string, over: Partial<CacheEntry> = {}): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ url: urlKey, n: Math.random() })),
    storedAt: Date.now(),
    ttlMs: 3_600_000,
    urlKey,
    modules: ['query'],
    slot: undefined,
    deps: ['*'],
    ...over,
  };
}

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('the fetch lock after a gap (%s)', (_name, start) => {
  let backend: RunningRedisBackend;
  const closing: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    backend = await start();
  }, 120_000);
  afterAll(async () => {
    for (const close of closing) await close();
    await backend?.stop();
  });

  /** A replica reduced to its storage, up; its Redis tier too, to take the lock by hand. */
  async function replica(prefix: string) {
    const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
    let tier: RedisTier | undefined;
    // Generous bounds: a busy machine must not take the tier down, nor end a wait, in this case.
    const connect = (hooks: SharedTierHooks) => (tier = backend.tier({ keyPrefix: prefix, timeoutMs: 1_000, lockMs: 20_000, ...hooks }));
    const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, connect);
    closing.push(() => storage.close());
    await storage.open(20_000);
    expect(tier!.up).toBe(true);
    return { storage, tier: tier! };
  }

  /** An entry stored in Redis before a gap that Redis records: fresh by its PTTL, stale on every replica. */
  async function storedBeforeAGap(prefix: string, key: string, urlKey: string): Promise<void> {
    const writer = backend.tier({ keyPrefix: prefix });
    expect(await writer.ready(20_000)).toBe(true);
    expect(await writer.set('shared', key, entry(urlKey, { storedAt: Date.now() - 1_000 }))).toBe(true);
    expect(await writer.purge({ kind: 'expire', before: Date.now() })).not.toBeNull();
    await writer.close();
  }

  it('an entry stored before the gap is not a fetch already finished: the lock is won, then held', async () => {
    const prefix = `lock-gap:${randomUUID()}:`;
    const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
    const key = `shared|${urlKey}`;
    await storedBeforeAGap(prefix, key, urlKey);
    const [a, b] = [await replica(prefix), await replica(prefix)];
    const won = await a.tier.lock(key, 'shared');
    expect(won.kind).toBe('won');
    expect((await b.tier.lock(key, 'shared')).kind).toBe('lost');
    if (won.kind === 'won') await a.tier.unlock(key, won.token);
  }, 60_000);

  it('one replica fetches the key, the other takes its entry', async () => {
    const prefix = `lock-gap:${randomUUID()}:`;
    const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
    const key = `shared|${urlKey}`;
    await storedBeforeAGap(prefix, key, urlKey);
    const [a, b] = [await replica(prefix), await replica(prefix)];
    let fetches = 0;
    let bWaits!: () => void;
    const bWaiting = new Promise<void>((resolve) => (bWaits = resolve));
    // A's fetch (it holds the lock) answers once B waits for it: B found the lock taken.
    const fetchA = async () => {
      fetches++;
      const mark = await a.storage.mark();
      await bWaiting;
      expect(await a.storage.store('shared', key, entry(urlKey), mark)).toBe(true);
      return 'a';
    };
    const ledA = a.storage.fetchOnce('shared', key, fetchA, { waitMs: 20_000 });
    // B asks once A holds the lock (its fetch began).
    while (fetches === 0) await new Promise((r) => setTimeout(r, 10));
    const ledB = b.storage.fetchOnce(
      'shared',
      key,
      async () => {
        fetches++;
        bWaits();
        return 'b';
      },
      { waitMs: 20_000, waiting: bWaits },
    );
    const [fromA, fromB] = await Promise.all([ledA, ledB]);
    expect(fromA).toEqual({ fetched: 'a' });
    expect('entry' in fromB).toBe(true);
    if ('entry' in fromB) expect(b.storage.freshness(fromB.entry)).toBe('fresh');
    expect(fetches).toBe(1);
  }, 60_000);
});
