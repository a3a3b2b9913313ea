// Purges the shared tier could not carry are kept and carried in order once it answers
// (src/cache/tiered-storage.ts). One it refuses every time while answering everything else (a
// pattern over a huge key space that never finishes within its bound, say) held back every
// purge behind it for good: Redis and the other replicas kept what they removed here. Failing
// for OWED_STUCK_MS, tried while the tier was up, it becomes a gap, which covers it and them.
// As a real tier does (redis/connection.ts), the fake one goes down at each error reply and is
// up again at its next check.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import type { PurgeMessage } from '../../src/words/purge-message.js';
import type { SharedTier } from '../../src/cache/storage.js';
import { OWED_STUCK_MS, OWED_TRIES_WHILE_UP, TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';

const STUCK: PurgeMessage = { kind: 'pattern', pattern: '/w/api.php?*' };
const BEHIND: PurgeMessage = { kind: 'url', urlKey: '/w/api.php?action=query&format=json&titles=Behind' };
const BEHIND_TOO: PurgeMessage = { kind: 'url', urlKey: '/w/api.php?action=query&format=json&titles=Behind_too' };

/** A shared tier that takes every purge but STUCK while `up`, and remembers what it took. */
function fakeTier() {
  const state = { up: false, carried: [] as PurgeMessage[], refused: 0 };
  const tier: Partial<SharedTier> = {
    get up() {
      return state.up;
    },
    purge: (message: PurgeMessage) => {
      if (!state.up) return Promise.resolve(null);
      if (message === STUCK) {
        state.refused++;
        // An error reply: down until the next check, 100 ms on.
        state.up = false;
        setTimeout(() => (state.up = true), 100);
        return Promise.resolve(null);
      }
      state.carried.push(message);
      return Promise.resolve(1);
    },
    close: () => Promise.resolve(),
  };
  return { state, tier: tier as SharedTier };
}

function storage(tier: SharedTier, lines: Record<string, unknown>[], told: boolean[] = []) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  // The primary hears whether this worker owes purges (cluster/primary.ts: a gap if it exits owing them).
  const siblings = { publish: () => undefined, owesPurges: (owes: boolean) => void told.push(owes) };
  return new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log, siblings }, () => tier);
}

describe('an owed purge the shared tier keeps refusing while it answers', () => {
  it('becomes a gap once it has failed for OWED_STUCK_MS, and the purges behind it are no longer held back', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const lines: Record<string, unknown>[] = [];
      const s = storage(tier, lines);
      expect((await s.purge(STUCK)).redisPurged).toBeNull();
      expect((await s.purge(BEHIND)).redisPurged).toBeNull();
      state.up = true;
      const start = Date.now();
      // A few seconds of refusals: still tried, nothing given up.
      await vi.advanceTimersByTimeAsync(5_000);
      expect(state.refused).toBeGreaterThanOrEqual(OWED_TRIES_WHILE_UP);
      expect(state.carried).toEqual([]);
      while (!state.carried.some((m) => m.kind === 'expire') && Date.now() - start < OWED_STUCK_MS * 2) await vi.advanceTimersByTimeAsync(500);
      // The gap (nothing stored before now vouched for, on every replica) stands for both.
      expect(state.carried).toHaveLength(1);
      expect(state.carried[0]).toMatchObject({ kind: 'expire' });
      expect(Date.now() - start).toBeGreaterThanOrEqual(OWED_STUCK_MS);
      expect(lines.find((l) => l['redisPurge'] === 'stuck')).toMatchObject({ kind: 'pattern', owed: 2 });
      expect(lines.some((l) => l['redisPurge'] === 'gap')).toBe(true);
      // Nothing owed any more: no more tries.
      const refused = state.refused;
      await vi.advanceTimersByTimeAsync(5_000);
      expect(state.refused).toBe(refused);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('is not counted against while the shared tier is down: tried again once it answers', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const told: boolean[] = [];
      const s = storage(tier, [], told);
      await s.purge(BEHIND);
      await s.purge(BEHIND_TOO);
      // Told once that it owes, not once per purge.
      expect(told).toEqual([true]);
      // Down for many retry periods: nothing becomes a gap.
      await vi.advanceTimersByTimeAsync(600 * (OWED_TRIES_WHILE_UP + 3));
      state.up = true;
      await vi.advanceTimersByTimeAsync(600);
      expect(state.carried).toEqual([BEHIND, BEHIND_TOO]);
      // And that it no longer does, once they are carried.
      expect(told).toEqual([true, false]);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('a gap handed over while a carry is under way is carried with it, not left without a retry', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const s = storage(tier, []);
      await s.purge(BEHIND);
      // The carry of BEHIND, held at the shared tier while a worker that exited owing purges hands its gap over.
      let release: () => void = () => undefined;
      const take = tier.purge;
      (tier as { purge: SharedTier['purge'] }).purge = (m) => (m === BEHIND ? new Promise((resolve) => (release = () => void take(m).then(resolve))) : take(m));
      state.up = true;
      await vi.advanceTimersByTimeAsync(600);
      s.adoptOwed({ messages: [], overflow: true });
      release();
      await vi.advanceTimersByTimeAsync(0);
      expect(state.carried.map((m) => m.kind)).toEqual(['url', 'expire']);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
