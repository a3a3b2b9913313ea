// A purge made while the shared tier cannot be reached (its Redis stopped: SIGSTOP, a master
// failing over) is not lost silently: this replica purges itself at once and answers
// `redisPurged: null`, then carries the purge to Redis and, over the channel, to the other
// replicas once Redis answers again (src/cache/tiered-storage.ts). Without that, Redis kept the
// purged entry and handed it to every replica as `hit-shared` until its TTL. On one redis-server
// and on a Redis Cluster, every node stopped (test/support/redis-backends.ts).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { bareReplicasOn, siteinfoEntry, untilPurgedFrom } from '../support/bare-replicas.js';
import { REDIS_BACKENDS, redisInstalled } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a purge while %s cannot be reached', (_name, start) => {
  const backend = bareReplicasOn(start);
  const replica = (log?: pino.Logger) => backend.start('owed:', log);
  const lines: Record<string, unknown>[] = [];

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&owed=1';
  const { key: KEY, entry } = siteinfoEntry(URL);

  it('the purge reaches Redis and the other replica once Redis answers again', async () => {
    const a = await replica(pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }));
    const b = await replica();
    expect(await a.storage.store('shared', KEY, entry(), await a.storage.mark())).toBe(true);
    expect((await b.storage.lookup('shared', KEY))?.shared).toBe(true);

    backend.redis.pause();
    const result = await a.storage.purge({ kind: 'url', urlKey: URL });
    expect(result).toEqual({ purged: 1, redisPurged: null });
    expect(a.store.get('shared', KEY)).toBeUndefined();
    // B still holds it: the channel could not carry the purge.
    expect(b.store.get('shared', KEY)).toBeDefined();
    expect(lines.some((l) => l['redisPurge'] === 'owed')).toBe(true);
    // What the change follower asks before it vouches (invalidation/follower.ts owesPurges).
    expect(a.storage.owesPurges()).toBe(true);
    expect(b.storage.owesPurges()).toBe(false);

    backend.redis.resume();
    await untilPurgedFrom(b, KEY);
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
    expect(a.storage.owesPurges()).toBe(false);
    // Gone from Redis too: a replica that starts now does not find it.
    const c = await replica();
    expect(await c.storage.lookup('shared', KEY)).toBeUndefined();
  });
});
