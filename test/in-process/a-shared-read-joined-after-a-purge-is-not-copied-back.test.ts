// Lookups of one key share one read of the shared tier. Each judges the entry it reads by the
// invalidation mark noted before the read was sent (src/cache/tiered-storage.ts readShared): an
// invalidation this replica applies while a reply is on its way (a purge heard on the channel
// before the reply of a GET sent earlier was read) may be one the reply predates. A lookup that
// joined a read sent before the purge noted its own mark after it: the purged entry passed its
// check, was copied into the local tier and served as `hit-shared` until it expired (up to the
// followed TTL), though this replica had applied its purge. On one redis-server and on a Redis Cluster.
import { describe, expect, it } from 'vitest';
import { bareReplicasOn, siteinfoEntry } from '../support/bare-replicas.js';
import { REDIS_BACKENDS, redisInstalled } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a read of %s joined after a purge', (_name, start) => {
  const backend = bareReplicasOn(start);
  const URL = '/w/api.php?action=query&format=json&meta=siteinfo&joined=1';
  const { key: KEY, entry } = siteinfoEntry(URL);

  it('is judged by the mark noted before it was sent: the purged entry is not copied back', async () => {
    const writer = await backend.start('joined:');
    expect(await writer.storage.store('shared', KEY, entry(), await writer.storage.mark())).toBe(true);
    const reader = await backend.start('joined:');
    // All in one turn of the event loop: the GET goes out with the first lookup, its reply is read
    // after the purge (applied here only, as a purge heard from another replica is: Redis still
    // holds the entry when the reply was read) and after the second lookup joined it.
    const first = reader.storage.lookup('shared', KEY);
    reader.storage.purgeHere({ kind: 'url', urlKey: URL });
    const joined = reader.storage.lookup('shared', KEY);
    expect(await first).toBeUndefined();
    expect(await joined).toBeUndefined();
    expect(reader.store.get('shared', KEY)).toBeUndefined();
    // A lookup sent after the purge was applied reads the entry Redis still holds: it may take it
    // (the replica that purged Redis has removed it there before telling the others).
    expect((await reader.storage.lookup('shared', KEY))?.shared).toBe(true);
  });
});
