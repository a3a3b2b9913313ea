// A reload retires the old gateway's storage. The purges it still owed the shared tier (made
// while Redis could not be reached: `redisPurged: null`, src/cache/tiered-storage.ts) were tried
// once more at its close, and while Redis was still away they were dropped with it: Redis and the
// other replicas served what those purges had removed until it expired. Operators reload exactly
// then (to fix the Redis settings). Now the retiring gateway hands them to the next one
// (src/cluster/generations.ts retire: Storage takeOwed, adoptOwed), which carries them once Redis
// answers. On one redis-server and on a Redis Cluster, stopped (SIGSTOP) and resumed
// (test/support/redis-backends.ts).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { bareReplicasOn, siteinfoEntry, untilPurgedFrom } from '../support/bare-replicas.js';
import { REDIS_BACKENDS, redisInstalled } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a reload while %s cannot be reached', (_name, start) => {
  const backend = bareReplicasOn(start);
  const replica = (log?: pino.Logger) => backend.start('handed:', log);
  const lines: Record<string, unknown>[] = [];

  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&handed=1';
  const { key: KEY, entry } = siteinfoEntry(URL);

  it("the next gateway carries the old one's owed purges to Redis and the other replicas once Redis answers", async () => {
    const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
    const old = await replica(log);
    const next = await replica(log);
    const other = await replica();
    expect(await old.storage.store('shared', KEY, entry(), await old.storage.mark())).toBe(true);
    expect((await other.storage.lookup('shared', KEY))?.shared).toBe(true);

    backend.redis.pause();
    expect(await old.storage.purge({ kind: 'url', urlKey: URL })).toEqual({ purged: 1, redisPurged: null });
    // The reload: the old storage is retired while Redis is still away.
    next.storage.adoptOwed(await old.storage.takeOwed());
    await old.storage.close();
    expect(lines.filter((l) => l['redisPurge'] === 'dropped')).toEqual([]);
    expect(other.store.get('shared', KEY), 'the other replica heard nothing yet').toBeDefined();

    backend.redis.resume();
    await untilPurgedFrom(other, KEY);
    expect(lines.some((l) => l['redisPurge'] === 'carried')).toBe(true);
    // Gone from Redis too: a replica that starts now does not find it.
    const later = await replica();
    expect(await later.storage.lookup('shared', KEY)).toBeUndefined();
  });
});
