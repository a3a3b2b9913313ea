// A purge the shared tier could not carry (Redis unreachable) is applied here and kept, to be
// carried once Redis answers (src/cache/tiered-storage.ts). Redis still holds the purged entry
// until then: when it answered again before the carry (the retry comes every 500 ms, and waits
// behind a first purge that keeps failing), the next lookup of that key on this very replica
// found the entry there and copied it back as `hit-shared`, though the purge said it was gone
// (a session's write read back stale, an operator's PURGE undone). While purges are owed, an
// entry of the shared tier that one of them removed here is not taken; others are.
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import type { PurgeMessage } from '../../src/words/purge-message.js';
import type { SharedTier } from '../../src/cache/storage.js';
import { MAX_OWED, TieredStorage } from '../../src/cache/tiered-storage.js';
import { SessionUsers } from '../../src/policy/session-users.js';

const PURGED = '/w/api.php?action=query&titles=Purged';
const OTHER = '/w/api.php?action=query&titles=Other';

function entry(urlKey: string): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: Buffer.from('{"batchcomplete":""}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey,
    modules: ['query'],
    slot: undefined,
    deps: [],
  };
}

/**
 * A shared tier holding an entry per URL key, removed by a URL purge it carries while `up`;
 * `answer` answers the purges it is given for (the others as said).
 */
function fakeTier(answer: (message: PurgeMessage) => Promise<number | null> | undefined = () => undefined) {
  const held = new Map([PURGED, OTHER].map((u) => [u, entry(u)]));
  const state = { up: false, carried: [] as PurgeMessage[] };
  const tier: Partial<SharedTier> = {
    get up() {
      return state.up;
    },
    get: (_tier, key) => Promise.resolve(state.up ? held.get(key) : undefined),
    purge: (message: PurgeMessage) => {
      const answered = answer(message);
      if (answered) return answered;
      if (!state.up) return Promise.resolve(null);
      state.carried.push(message);
      if (message.kind === 'url') held.delete(message.urlKey);
      return Promise.resolve(1);
    },
    close: () => Promise.resolve(),
  };
  return { state, held, tier: tier as SharedTier };
}

/** The local tier and the storage over it and `tier`. */
function storageOn(tier: SharedTier) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
  return { store, s: new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log: pino({ level: 'silent' }) }, () => tier) };
}

/** More purges than are kept, owed while the tier is down: a gap stands for them. */
async function oweAGap(s: TieredStorage): Promise<void> {
  for (let i = 0; i <= MAX_OWED; i++) await s.purge({ kind: 'url', urlKey: `/w/api.php?action=query&titles=P${i}` });
}

describe('an entry purged here while the shared tier could not carry the purge', () => {
  it('is not copied back from the shared tier before the purge is carried; other entries are', async () => {
    vi.useFakeTimers();
    try {
      const { state, held, tier } = fakeTier();
      const { store, s } = storageOn(tier);
      store.set('shared', PURGED, entry(PURGED));
      expect((await s.purge({ kind: 'url', urlKey: PURGED })).redisPurged).toBeNull();
      expect(store.get('shared', PURGED)).toBeUndefined();
      // Redis answers again; the owed purge has not been carried yet.
      state.up = true;
      expect(state.carried).toEqual([]);
      expect(await s.lookup('shared', PURGED)).toBeUndefined();
      expect(await s.lookup('shared', OTHER)).toMatchObject({ shared: true });
      // A gap applied here meanwhile (the channel's return after the outage is one): an entry
      // stored after it is fresh here, and taken, though a purge is still owed.
      vi.setSystemTime(Date.now() + 10);
      s.purgeHere({ kind: 'expire', before: Date.now() });
      vi.setSystemTime(Date.now() + 10);
      held.set(OTHER, entry(OTHER));
      expect(await s.lookup('shared', OTHER)).toMatchObject({ shared: true });
      expect(await s.lookup('shared', PURGED)).toBeUndefined();
      // Carried: nothing owed, nothing held back any more.
      await vi.advanceTimersByTimeAsync(1_000);
      expect(state.carried).toEqual([{ kind: 'url', urlKey: PURGED }]);
      expect(await s.lookup('shared', PURGED)).toBeUndefined();
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a purge under way when the purges owed before it become a gap', () => {
  // The gap stands for what was owed before it; a purge owed while it is carried is not among
  // them and holds its entry back until it is carried itself.
  it('still holds its entry back once it is owed', async () => {
    vi.useFakeTimers();
    try {
      // The purge of PURGED and the gap wait until told: the first fails, the second is taken.
      let failPurge: (() => void) | undefined;
      let takeGap!: () => void;
      const { state, tier } = fakeTier((message) => {
        // Its later tries (the carry) fail at once.
        if (message.kind === 'url' && message.urlKey === PURGED)
          return failPurge ? Promise.resolve(null) : new Promise((resolve) => (failPurge = () => resolve(null)));
        if (message.kind === 'expire') return new Promise((resolve) => (takeGap = () => resolve(1)));
        return undefined;
      });
      const { store, s } = storageOn(tier);
      // More purges than kept while the tier is down: a gap will stand for them.
      await oweAGap(s);
      state.up = true;
      // The purge of PURGED: applied here, its call to the shared tier under way.
      store.set('shared', PURGED, entry(PURGED));
      const purging = s.purge({ kind: 'url', urlKey: PURGED });
      // The carry begins with the gap; the purge fails meanwhile, and is owed.
      await vi.advanceTimersByTimeAsync(500);
      failPurge!();
      expect((await purging).redisPurged).toBeNull();
      takeGap();
      await vi.advanceTimersByTimeAsync(0);
      // Redis still holds PURGED (its purge is owed): not copied back.
      expect(await s.lookup('shared', PURGED)).toBeUndefined();
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('a gap handed over by another process while this one carries its own', () => {
  // A worker that exits owing purges hands its gap to a sibling (cluster/worker-side.ts); the
  // purges it stands for were applied here already. Handed over while this process's own gap was
  // under way, it left the guard unset once that gap was carried: what the exiting worker purged
  // was copied back from Redis while the handed gap was still owed.
  it('holds back what the other process purged until it is carried', async () => {
    vi.useFakeTimers();
    try {
      const gaps: (() => void)[] = [];
      const { state, tier } = fakeTier((message) => (message.kind === 'expire' ? new Promise((resolve) => gaps.push(() => resolve(1))) : undefined));
      const { s } = storageOn(tier);
      await oweAGap(s);
      state.up = true;
      await vi.advanceTimersByTimeAsync(500);
      expect(gaps).toHaveLength(1);
      // The exiting worker's purge, applied here through the siblings, then its gap handed over.
      s.purgeHere({ kind: 'url', urlKey: PURGED });
      s.adoptOwed({ messages: [], overflow: true });
      gaps[0]!();
      await vi.advanceTimersByTimeAsync(0);
      // This process's gap is carried; the handed one is under way.
      expect(gaps).toHaveLength(2);
      expect(await s.lookup('shared', PURGED)).toBeUndefined();
      gaps[1]!();
      await s.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
