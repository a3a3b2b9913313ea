// A reload retires the old gateway's storage. The purges it still owed the shared tier (made
// while Redis could not be reached: `redisPurged: null`, src/cache/tiered-storage.ts) were tried
// once more at its close, and while Redis was still away they were dropped with it: Redis and the
// other replicas served what those purges had removed until it expired. Operators reload exactly
// then (to fix the Redis settings). Now the retiring gateway hands them to the next one
// (src/cluster/generations.ts retire: Storage takeOwed, adoptOwed), which carries them once Redis
// answers. On one redis-server and on a Redis Cluster, stopped (SIGSTOP) and resumed
// (test/support/redis-backends.ts).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a reload while %s cannot be reached', (_name, start) => {
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
      redis.tier({ timeoutMs: 300, lockMs: 3_000, keyPrefix: 'handed:', ...hooks }),
    );
    storages.push(storage);
    await storage.open(5_000);
    return { storage, store };
  }

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&handed=1';
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

  it("the next gateway carries the old one's owed purges to Redis and the other replicas once Redis answers", async () => {
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
    const old = await replica(log);
    const next = await replica(log);
    const other = await replica();
    expect(await old.storage.store('shared', KEY, entry(), await old.storage.mark())).toBe(true);
    expect((await other.storage.lookup('shared', KEY))?.shared).toBe(true);

    redis.pause();
    expect(await old.storage.purge({ kind: 'url', urlKey: URL })).toEqual({ purged: 1, redisPurged: null });
    // The reload: the old storage is retired while Redis is still away.
    next.storage.adoptOwed(await old.storage.takeOwed());
    await old.storage.close();
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([]);
    expect(other.store.get('shared', KEY), 'the other replica heard nothing yet').toBeDefined();

    redis.resume();
    await until(
      async () => other.store.get('shared', KEY),
      (e) => e === undefined,
      20_000,
    );
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
    // Gone from Redis too: a replica that starts now does not find it.
    const later = await replica();
    expect(await later.storage.lookup('shared', KEY)).toBeUndefined();
  });
});
