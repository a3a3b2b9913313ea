// Redis' gap mark (`stale-before`) set to something that is no number (by hand, or by another
// program under the key prefix) read as NaN: no entry is stored before NaN, so every entry in
// Redis was vouched for, whatever gap it had missed; and the gap script compared the instant
// with nil and failed, so no gap could be recorded again. It reads now as a gap at the moment it
// was read, and the next gap writes its number over it (src/cache/redis-tier.ts,
// redis/invalidations.ts EXPIRE_LUA).
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { oneRedis, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

function entry(urlKey: string): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ url: urlKey })),
    storedAt: Date.now() - 1_000,
    ttlMs: 3_600_000,
    urlKey,
    modules: ['query'],
    slot: undefined,
    deps: ['*'],
  };
}

describe.runIf(redisInstalled)('a gap mark in Redis that is no number', () => {
  let backend: RunningRedisBackend;
  const closing: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    backend = await oneRedis();
  }, 60_000);
  afterAll(async () => {
    for (const close of closing) await close();
    await backend?.stop();
  });

  it.each(['not-a-number', 'NaN', 'inf', '1e400', '""', '9'.repeat(400)])(
    '%s: vouches for no entry stored before it was read, and the next gap writes over it',
    async (mark) => {
      const prefix = `nan:${randomUUID()}:`;
      const urlKey = `/w/api.php?action=query&titles=${randomUUID()}`;
      const key = `shared|${urlKey}`;
      const writer = backend.tier({ keyPrefix: prefix });
      closing.push(() => writer.close());
      expect(await writer.ready(20_000)).toBe(true);
      expect(await writer.set('shared', key, entry(urlKey))).toBe(true);
      expect(await backend.server!.command(`SET ${prefix}stale-before ${mark}`)).toMatch(/^\+OK/);

      const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
      const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, (hooks) =>
        backend.tier({ keyPrefix: prefix, ...hooks }),
      );
      closing.push(() => storage.close());
      await storage.open(5_000);
      const found = await until(
        () => storage.lookup('shared', key),
        (f) => f !== undefined,
        10_000,
      );
      expect(found!.shared).toBe(true);
      expect(storage.freshness(found!.entry)).not.toBe('fresh');

      // A gap is recorded again: the mark is its number.
      const before = Date.now();
      expect(await writer.purge({ kind: 'expire', before })).not.toBeNull();
      expect(await backend.server!.command(`GET ${prefix}stale-before`)).toContain(String(before));
    },
    60_000,
  );
});
