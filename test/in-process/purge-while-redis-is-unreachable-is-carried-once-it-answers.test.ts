// A purge made while the shared tier cannot be reached (its Redis stopped: SIGSTOP, a master
// failing over) is not lost silently: this replica purges itself at once and answers
// `redisPurged: null`, then carries the purge to Redis and, over the channel, to the other
// replicas once Redis answers again (src/cache/tiered-storage.ts). Without that, Redis kept the
// purged entry and handed it to every replica as `hit-shared` until its TTL. On one redis-server
// and on a Redis Cluster, every node stopped (test/support/redis-backends.ts).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a purge while %s cannot be reached', (_name, start) => {
  let redis: RunningRedisBackend;
  const storages: TieredStorage[] = [];
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    redis = await start();
  }, 120_000);
  afterAll(async () => {
    redis?.resume();
    await Promise.all(storages.map((s) => s.close()));
    await redis?.stop();
  });

  async function replica(log = pino({ level: 'silent' })) {
    const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
    const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, (hooks) =>
      redis.tier({ timeoutMs: 300, lockMs: 3_000, keyPrefix: 'owed:', ...hooks }),
    );
    storages.push(storage);
    await storage.open(5_000);
    return { storage, store };
  }

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&owed=1';
  const KEY = `${URL}\nanon\n-`;
  const entry = (): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"old":true}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: URL,
    modules: ['query', 'siteinfo'],
    slot: undefined,
    deps: ['*'],
  });

  it('the purge reaches Redis and the other replica once Redis answers again', async () => {
    const a = await replica(pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }));
    const b = await replica();
    expect(await a.storage.store('shared', KEY, entry(), await a.storage.mark())).toBe(true);
    expect((await b.storage.lookup('shared', KEY))?.shared).toBe(true);

    redis.pause();
    const result = await a.storage.purge({ kind: 'url', urlKey: URL });
    expect(result).toEqual({ purged: 1, redisPurged: null });
    expect(a.store.get('shared', KEY)).toBeUndefined();
    // B still holds it: the channel could not carry the purge.
    expect(b.store.get('shared', KEY)).toBeDefined();
    expect(lines.some((l) => l['redisPurge'] === 'owed')).toBe(true);

    redis.resume();
    await until(
      async () => b.store.get('shared', KEY),
      (e) => e === undefined,
      20_000,
    );
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
    // Gone from Redis too: a replica that starts now does not find it.
    const c = await replica();
    expect(await c.storage.lookup('shared', KEY)).toBeUndefined();
  });
});
