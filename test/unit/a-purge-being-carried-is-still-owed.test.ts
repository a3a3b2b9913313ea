// Storage.owesPurges() (cache/tiered-storage.ts) is what the change follower asks before it
// vouches (invalidation/follower.ts): while it is true, the other replicas may still serve what
// a purge removed here. The carry takes a purge off the queue before Redis has taken it; a poll
// in that window (most of the time, when each try runs to the Redis timeout) vouched, and the
// purge went back on the queue after.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import type { SharedTier } from '../../src/cache/storage.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';

describe('a purge being carried to the shared tier', () => {
  it('is owed until the shared tier has taken it, and again when it failed', async () => {
    vi.useFakeTimers();
    try {
      let up = false;
      const tries: ((removed: number | null) => void)[] = [];
      const tier: Partial<SharedTier> = {
        get up() {
          return up;
        },
        get: () => Promise.resolve(undefined),
        purge: () => (up ? new Promise<number | null>((resolve) => tries.push(resolve)) : Promise.resolve(null)),
        close: () => Promise.resolve(),
      };
      const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
      const s = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, () => tier as SharedTier);
      expect(s.owesPurges()).toBe(false);
      expect((await s.purge({ kind: 'tags', tags: ['p:Q1'] })).redisPurged).toBeNull();
      expect(s.owesPurges()).toBe(true);

      up = true;
      await vi.advanceTimersByTimeAsync(500);
      expect(tries).toHaveLength(1);
      // Under way: off the queue, not taken yet.
      expect(s.owesPurges()).toBe(true);
      tries[0]!(null);
      await vi.advanceTimersByTimeAsync(0);
      expect(s.owesPurges()).toBe(true);

      await vi.advanceTimersByTimeAsync(500);
      expect(tries).toHaveLength(2);
      expect(s.owesPurges()).toBe(true);
      tries[1]!(1);
      await vi.advanceTimersByTimeAsync(0);
      expect(s.owesPurges()).toBe(false);
      up = false;
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
