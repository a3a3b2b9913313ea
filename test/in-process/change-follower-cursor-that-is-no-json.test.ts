// A follower cursor in Redis that is no JSON (an operator's SET, a tool sharing the key prefix, a
// partial restore) made its read throw, before the follower could judge it: on the leader at every
// resume and on every standby at every poll, forever (nothing writes the key back before a read
// succeeds): no edit applied again, short TTLs everywhere until someone deleted the key. It is
// read as a cursor that cannot be read (src/cache/redis/follower-state.ts): one `cursor-lost`
// gap, a cursor written over it, and the follower goes on.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import type { Cursor } from '../../src/invalidation/follower.js';
import { type FakeRecentChanges, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';

const PREFIX = 'nojson:';

describe.runIf(redisInstalled)('a follower cursor that is no JSON', () => {
  let redis: TestRedis;
  let client: Redis;
  let tier: RedisTier;
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.port, '127.0.0.1');
    tier = bareRedisTier(redis.url, { keyPrefix: PREFIX, timeoutMs: 2_000 });
    expect(await tier.ready(20_000)).toBe(true);
    ({ wiki, upstream: server } = await startFakeWiki());
  }, 30_000);
  afterAll(async () => {
    await server?.close();
    await tier?.close();
    client?.disconnect();
    await redis?.stop();
  });

  it('is a cursor lost: one gap, a cursor written over it, and the rows after it applied', async () => {
    const key = redisKeys(PREFIX).rcCursor;
    await client.set(key, '{"v":2,"ts":"2026-03-01T12:00:00Z",');
    const state = tier.followerState;
    wiki.add('History');
    const f = followerOf(server.url, {
      now: wiki.clock,
      cursors: { load: async () => (await state.loadCursor()) as Cursor | undefined, save: (c) => state.saveCursor(c) },
    });
    try {
      await f.follower.pollOnce();
      expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
      const written = (await client.get(key))!;
      expect(() => JSON.parse(written) as unknown).not.toThrow();
      wiki.clock += 10_000;
      wiki.add('Edited');
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['Edited']);
      expect(f.gaps).toHaveLength(1);
    } finally {
      await f.close();
    }
  });
});
