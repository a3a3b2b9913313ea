// A change's rebound (src/invalidation/signals.ts) that Redis cannot take is not kept to carry
// later (PurgeOptions.oweIfUnreachable false): during an outage every change would otherwise owe
// two purges, the owed list (tiered-storage.ts MAX_OWED) would overflow twice as fast, and its
// overflow is a gap that expires everything cached on every replica once Redis answers. The
// change's own purge is still owed, and carried after its rebound was due. One redis-server and
// a Redis Cluster, every node stopped.
import { describe, expect, it } from 'vitest';
import { bareReplicasOn } from '../support/bare-replicas.js';
import { REDIS_BACKENDS, redisInstalled } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a purge while %s cannot be reached', (_name, start) => {
  const backend = bareReplicasOn(start);

  it('is owed, and a rebound is not', async () => {
    const a = await backend.start('rebound-owed:');
    backend.redis.pause();
    try {
      expect((await a.storage.purge({ kind: 'tags', tags: ['p:Item:Q1'] })).redisPurged).toBeNull();
      expect((await a.storage.purge({ kind: 'tags', tags: ['p:Item:Q1'] }, { oweIfUnreachable: false })).redisPurged).toBeNull();
      const owed = await a.storage.takeOwed();
      expect(owed.messages).toEqual([{ kind: 'tags', tags: ['p:Item:Q1'] }]);
      expect(owed.overflow).toBe(false);
    } finally {
      backend.redis.resume();
    }
  });
});
