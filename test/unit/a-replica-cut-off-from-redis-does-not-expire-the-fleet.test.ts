// One replica cut off from Redis (its path to it, not Redis) hears of no vouching poll: after
// gapAfterMs its follower takes the `stalled` gap (invalidation/follower.ts checkStalled),
// expiring its local tier, and owes it to the shared tier it cannot reach. Carried once Redis
// answered again, it raised Redis' stale-before and every replica's: the whole fleet refetched
// what was fresh, though the follower that held the lease vouched all along and applied every
// change to Redis and the other replicas. Such a gap is now carried only when no follower
// vouched past its instant (the cursor's polledAt in the shared tier: tiered-storage.ts
// carryOwedNow); any other gap, and a stalled one nobody vouched past (Redis down for
// everyone), is carried as before.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { CacheStore } from '../../src/cache/store.js';
import type { PurgeMessage, PurgeResult } from '../../src/cache/purge.js';
import type { SharedFollowerState, SharedTier } from '../../src/cache/storage.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import type { GapReason } from '../../src/words/outcomes.js';

const T0 = Date.UTC(2026, 10, 30, 12);

/** A shared tier down until `state.up`, taking every purge then, its cursor's polledAt settable. */
function fakeTier() {
  const state = { up: false, carried: [] as PurgeMessage[], polledAt: undefined as number | undefined, cursorFails: false };
  const followerState: Partial<SharedFollowerState> = {
    loadCursor: () =>
      state.cursorFails ? Promise.reject(new Error('timeout')) : Promise.resolve(state.polledAt === undefined ? { v: 2 } : { v: 2, polledAt: state.polledAt }),
  };
  const tier: Partial<SharedTier> = {
    get up() {
      return state.up;
    },
    followerState: followerState as SharedFollowerState,
    purge: (message: PurgeMessage) => {
      if (!state.up) return Promise.resolve(null);
      state.carried.push(message);
      return Promise.resolve(1);
    },
    close: () => Promise.resolve(),
  };
  return { state, tier: tier as SharedTier };
}

function replica(tier: SharedTier) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, () => tier);
  const signals = new ChangeSignals({
    purge: (m): Promise<PurgeResult> => storage.purge(m),
    purgeHere: (m): Promise<PurgeResult> => Promise.resolve({ purged: storage.purgeHere(m) }),
    metrics: { event: () => undefined, invalidated: () => undefined, lag: () => undefined },
    log: pino({ level: 'silent' }),
    now: Date.now,
    shortTtl: { ttlPublicSeconds: 60, ttlSessionSeconds: 10 },
    followedTtl: { ttlPublicSeconds: 3600, ttlSessionSeconds: 300 },
    reboundMs: 0,
  });
  return { storage, signals };
}

/** The replica's gap while Redis cannot be reached, then Redis back and 10 s of carrying. */
async function gapThenBack(reason: GapReason, polledAt: (before: number) => number | undefined, cursorFails = false) {
  const { state, tier } = fakeTier();
  const { storage, signals } = replica(tier);
  const before = Date.now();
  await signals.expire(before, reason);
  expect(state.carried).toEqual([]);
  state.polledAt = polledAt(before);
  state.cursorFails = cursorFails;
  state.up = true;
  await vi.advanceTimersByTimeAsync(10_000);
  await storage.close();
  return state.carried;
}

describe('a stalled gap owed to a shared tier this replica could not reach', () => {
  it('a follower vouched past it meanwhile: the gap was this replica`s alone, not carried', async () => {
    vi.useFakeTimers({ now: T0 });
    try {
      expect(await gapThenBack('stalled', (before) => before + 5_000)).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('nobody vouched past it (Redis down for everyone): carried, every replica and Redis expire', async () => {
    vi.useFakeTimers({ now: T0 });
    try {
      expect(await gapThenBack('stalled', (before) => before - 30_000)).toEqual([expect.objectContaining({ kind: 'expire' })]);
      expect(await gapThenBack('stalled', () => undefined)).toEqual([expect.objectContaining({ kind: 'expire' })]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('the cursor cannot be read: carried', async () => {
    vi.useFakeTimers({ now: T0 });
    try {
      expect(await gapThenBack('stalled', (before) => before + 5_000, true)).toEqual([expect.objectContaining({ kind: 'expire' })]);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each(['cursor-lost', 'clock', 'behind', 'row-unreadable'] as GapReason[])('a %s gap is carried, whoever vouched since', async (reason) => {
    vi.useFakeTimers({ now: T0 });
    try {
      expect(await gapThenBack(reason, (before) => before + 5_000)).toEqual([expect.objectContaining({ kind: 'expire' })]);
    } finally {
      vi.useRealTimers();
    }
  });
});
