// While the shared tier cannot carry a purge (Redis down, a failover), the purge is kept and
// carried once it answers (src/cache/tiered-storage.ts, src/cache/owed-purges.ts); past a bound,
// a gap stands for them all: nothing cached before it is vouched for on any replica. Every POST
// under a session cookie owes one (steps/session-lifecycle.ts), and any client can make up
// session cookies: a thousand such requests during an outage emptied every replica once Redis
// answered, as did the same purge owed a thousand times. Sessions' own purges are kept apart,
// by slot, and every purge is kept once.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import type { PurgeMessage } from '../../src/words/purge-message.js';
import type { SharedTier } from '../../src/cache/storage.js';
import { MAX_OWED, MAX_OWED_SLOTS, TieredStorage } from '../../src/cache/tiered-storage.js';
import { OwedQueue } from '../../src/cache/owed-purges.js';
import { SessionUsers } from '../../src/policy/session-users.js';

/** A shared tier that takes every purge while `up`, and remembers what it took. */
function fakeTier() {
  const state = { up: false, carried: [] as PurgeMessage[] };
  const tier: Partial<SharedTier> = {
    get up() {
      return state.up;
    },
    purge: (message: PurgeMessage) => {
      if (!state.up) return Promise.resolve(null);
      state.carried.push(message);
      return Promise.resolve(0);
    },
    close: () => Promise.resolve(),
  };
  return { state, tier: tier as SharedTier };
}

function storage(tier: SharedTier, lines: Record<string, unknown>[]) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  return new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, () => tier);
}

/** Until nothing more is carried. */
async function carried(state: { carried: PurgeMessage[] }): Promise<void> {
  let before = -1;
  while (state.carried.length !== before) {
    before = state.carried.length;
    await vi.advanceTimersByTimeAsync(1_000);
  }
}

describe('purges owed while the shared tier cannot carry them', () => {
  it('writes under made-up sessions, more than MAX_OWED of them, are carried one by one: no gap', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const lines: Record<string, unknown>[] = [];
      const s = storage(tier, lines);
      const sessions = MAX_OWED + 500;
      for (let i = 0; i < sessions; i++) await s.purge({ kind: 'slot', slot: `made-up-${i}`, wrote: true }, { onClientPath: true });
      state.up = true;
      await carried(state);
      expect(state.carried.some((m) => m.kind === 'expire')).toBe(false);
      expect(state.carried).toHaveLength(sessions);
      expect(lines.some((l) => l['redisPurge'] === 'gap' || l['redisPurge'] === 'overflow')).toBe(false);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('the same purge owed again and again is carried once, and the rest in order', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const lines: Record<string, unknown>[] = [];
      const s = storage(tier, lines);
      const page: PurgeMessage = { kind: 'url', urlKey: '/w/api.php?action=query&titles=Again' };
      const other: PurgeMessage = { kind: 'tags', tags: ['p:Other', 'p:Another'] };
      for (let i = 0; i < MAX_OWED + 1; i++) {
        await s.purge({ ...page });
        await s.purge({ kind: 'slot', slot: 'one-session' });
      }
      await s.purge(other);
      // The same tags in another order are the same purge.
      await s.purge({ kind: 'tags', tags: ['p:Another', 'p:Other'] });
      // A write of the same session is kept over its plain purge (it also ends the user's other sessions).
      await s.purge({ kind: 'slot', slot: 'one-session', wrote: true });
      state.up = true;
      await carried(state);
      expect(state.carried).toEqual([page, other, { kind: 'slot', slot: 'one-session', wrote: true }]);
      expect(lines.some((l) => l['redisPurge'] === 'gap')).toBe(false);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('past MAX_OWED_SLOTS sessions, a gap stands for them', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const lines: Record<string, unknown>[] = [];
      const s = storage(tier, lines);
      for (let i = 0; i <= MAX_OWED_SLOTS; i++) await s.purge({ kind: 'slot', slot: `session-${i}` }, { onClientPath: true });
      expect(lines.find((l) => l['redisPurge'] === 'overflow')).toMatchObject({ kind: 'slot' });
      state.up = true;
      await carried(state);
      expect(state.carried).toEqual([expect.objectContaining({ kind: 'expire' })]);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  }, 60_000);

  it('past MAX_OWED other purges, a gap stands for them', async () => {
    vi.useFakeTimers();
    try {
      const { state, tier } = fakeTier();
      const lines: Record<string, unknown>[] = [];
      const s = storage(tier, lines);
      for (let i = 0; i <= MAX_OWED; i++) await s.purge({ kind: 'url', urlKey: `/w/api.php?action=query&titles=P${i}` });
      state.up = true;
      await carried(state);
      expect(state.carried).toEqual([expect.objectContaining({ kind: 'expire' })]);
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a session`s purge that could not be carried', () => {
  it('is kept again with the `wrote` of either, when the same session was owed meanwhile', () => {
    const owed = new OwedQueue();
    owed.add({ kind: 'slot', slot: 's', wrote: true });
    const taken = owed.take()!;
    // Owed again while it was being carried (a logout: no write).
    owed.add({ kind: 'slot', slot: 's' });
    owed.putBack(taken);
    expect(owed.takeAll()).toEqual([{ kind: 'slot', slot: 's', wrote: true }]);
  });
});
