// A purge made while the shared tier cannot be reached (its Redis stopped: SIGSTOP, a master
// failing over) is not lost silently: this replica purges itself at once and answers
// `redisPurged: null`, then carries the purge to Redis and, over the channel, to the other
// replicas once Redis answers again (src/cache/tiered-storage.ts). Without that, Redis kept the
// purged entry and handed it to every replica as `hit-shared` until its TTL.
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { RedisTier } from '../../src/cache/redis-tier.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { until } from '../support/until.js';

let redis: TestRedis;
const storages: TieredStorage[] = [];
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  if (redis.pid) process.kill(redis.pid, 'SIGCONT');
  await Promise.all(storages.map((s) => s.close()));
  await redis.stop();
});

async function replica(log = pino({ level: 'silent' })) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  const storage = new TieredStorage(
    { store, users: new SessionUsers(), now: Date.now, log },
    (hooks) =>
      new RedisTier({
        url: redis.url,
        timeoutMs: 300,
        lockMs: 3_000,
        keyPrefix: 'owed:',
        windows: { graceMs: 0, staleIfErrorMs: 0 },
        now: Date.now,
        log: pino({ level: 'silent' }),
        metrics: new RedisMetrics(new Registry()),
        ...hooks,
      }),
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

  process.kill(redis.pid!, 'SIGSTOP');
  const result = await a.storage.purge({ kind: 'url', urlKey: URL });
  expect(result).toEqual({ purged: 1, redisPurged: null });
  expect(a.store.get('shared', KEY)).toBeUndefined();
  // B still holds it: the channel could not carry the purge.
  expect(b.store.get('shared', KEY)).toBeDefined();
  expect(lines.some((l) => l['redisPurge'] === 'owed')).toBe(true);

  process.kill(redis.pid!, 'SIGCONT');
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
