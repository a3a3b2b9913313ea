// A gap in the change signals is recorded in Redis as `stale-before`: entries stored before it
// are refreshed at their next use on every replica, not served fresh. A replica read it once, at
// start, and only when Redis answered within the start's wait: one started while Redis was
// unreachable or still loading its dataset, or whose one read failed, served the entries stored
// before the gap from Redis as fresh (`hit-shared`) for their whole TTL. It learns it now each
// time the tier comes up, reads it again until it has it, and serves no Redis entry meanwhile
// (src/cache/redis/stale-before.ts). And what it cached from the wiki before its purge channel
// was first subscribed (purges it never heard) is refreshed once it is, on one Redis and on a
// Redis Cluster alike (src/cache/redis/connection.ts subscriberUp).
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import type { SharedTierHooks } from '../../src/cache/storage.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { oneRedis, REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { bareRedisTier } from '../support/redis.js';
import { until } from '../support/until.js';

function entry(urlKey: string, over: Partial<CacheEntry> = {}): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ url: urlKey })),
    storedAt: Date.now(),
    ttlMs: 3_600_000,
    urlKey,
    modules: ['query'],
    slot: undefined,
    deps: ['*'],
    ...over,
  };
}

/** A replica reduced to its storage: a local tier in front of a Redis tier built by `tier`. */
function replica(tier: (hooks: SharedTierHooks) => RedisTier) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  return { store, storage: new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, tier) };
}

/** An entry stored in Redis before a gap that Redis records: fresh by its TTL, not vouched for. */
async function storedBeforeAGap(writer: RedisTier, key: string, urlKey: string): Promise<void> {
  expect(await writer.ready(20_000)).toBe(true);
  expect(await writer.set('shared', key, entry(urlKey, { storedAt: Date.now() - 1_000 }))).toBe(true);
  expect(await writer.purge({ kind: 'expire', before: Date.now() })).not.toBeNull();
  await writer.close();
}

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a replica that starts before Redis answers (%s)', (_name, start) => {
  let backend: RunningRedisBackend;
  const closing: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    backend = await start();
  }, 120_000);
  afterAll(async () => {
    backend?.resume();
    for (const close of closing) await close();
    await backend?.stop();
  });

  /** A replica whose start gave up waiting: every server stopped (SIGSTOP) meanwhile, as a Redis loading its dataset holds it. */
  async function startedWhileRedisHangs(prefix: string) {
    const r = replica((hooks) => backend.tier({ keyPrefix: prefix, timeoutMs: 1_000, ...hooks }));
    closing.push(() => r.storage.close());
    backend.pause();
    try {
      await r.storage.open(300);
    } finally {
      backend.resume();
    }
    return r;
  }

  it('takes the gap Redis records once it answers: the entries stored before it are not fresh', async () => {
    const prefix = `learned:${randomUUID()}:`;
    const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
    const key = `shared|${urlKey}`;
    await storedBeforeAGap(backend.tier({ keyPrefix: prefix }), key, urlKey);
    const r = await startedWhileRedisHangs(prefix);
    // Whatever the lookup finds once Redis answers, it is the entry stored before the gap: never fresh.
    const found = await until(
      () => r.storage.lookup('shared', key),
      (f) => f !== undefined,
      30_000,
    );
    expect(found!.shared).toBe(true);
    expect(r.storage.freshness(found!.entry)).not.toBe('fresh');
  }, 60_000);

  it('refreshes what it cached before its purge channel was first subscribed', async () => {
    const prefix = `learned:${randomUUID()}:`;
    const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
    const r = await startedWhileRedisHangs(prefix);
    // Fetched from the wiki and kept here while no purge from the other replicas could reach it
    // (the tier was down at the fetch: it stays local).
    // A millisecond back: the channel may come up within the millisecond of the store.
    const cached = entry(urlKey, { storedAt: Date.now() - 1 });
    expect(await r.storage.store('shared', `shared|${urlKey}`, cached, await r.storage.mark())).toBe(true);
    expect(r.storage.freshness(cached)).toBe('fresh');
    await until(
      () => Promise.resolve(r.storage.freshness(cached)),
      (f) => f !== 'fresh',
      30_000,
    );
  }, 60_000);
});

describe.runIf(redisInstalled)('a replica whose read of the gap mark fails', () => {
  let backend: RunningRedisBackend;
  let storage: TieredStorage | undefined;
  beforeAll(async () => {
    backend = await oneRedis();
  }, 60_000);
  afterAll(async () => {
    await storage?.close();
    await backend?.stop();
  });

  it('serves no Redis entry until it has read it again, then none stored before it as fresh', async () => {
    const prefix = `unread:${randomUUID()}:`;
    const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
    const key = `shared|${urlKey}`;
    await storedBeforeAGap(backend.tier({ keyPrefix: prefix }), key, urlKey);
    // A user that may read and write every key of the prefix but `stale-before` (the only one
    // whose name starts with "st"): the read fails (NOPERM), every other call answers.
    const server = backend.server!;
    const allowed = [`~${prefix}[^s]*`, `~${prefix}s:*`, `~${prefix}su:*`];
    expect(await server.command(`ACL SETUSER learner on >learner-pass +@all &* resetkeys ${allowed.join(' ')}`)).toMatch(/^\+OK/);
    const r = replica((hooks) => bareRedisTier(`redis://learner:learner-pass@127.0.0.1:${server.port}`, { keyPrefix: prefix, timeoutMs: 1_000, ...hooks }));
    storage = r.storage;
    await r.storage.open(2_000);
    expect(await r.storage.lookup('shared', key)).toBeUndefined();
    // Readable again: taken at the next try, then the entry is found, stored before the gap.
    expect(await server.command(`ACL SETUSER learner allkeys`)).toMatch(/^\+OK/);
    const found = await until(
      () => r.storage.lookup('shared', key),
      (f) => f !== undefined,
      30_000,
    );
    expect(r.storage.freshness(found!.entry)).not.toBe('fresh');
  }, 60_000);
});
