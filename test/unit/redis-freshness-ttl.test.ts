// Freshness and lifetimes shared by the local tier, the Redis tier and every replica: pure
// arithmetic on an entry's own storedAt/ttlMs, so an entry copied between replicas (or written to
// Redis after a slow fetch) is fresh, stale and gone at the same instants everywhere.
import { describe, expect, it } from 'vitest';
import { ageSeconds, freshnessAt, keepMs, remainingKeepMs, replacesLocal } from '../../src/policy/freshness.js';
import { CacheStore, type CacheEntry } from '../../src/cache/store.js';
import { globEscape, parsePurgeMessage, redisKeys } from '../../src/cache/redis-tier.js';

const w = { graceMs: 10_000, staleIfErrorMs: 300_000 };
const e = (storedAt: number, ttlMs: number) => ({ storedAt, ttlMs });

describe('freshness', () => {
  it('fresh, grace, stale-if-error and dead at the window edges', () => {
    const entry = e(1_000, 60_000);
    expect(freshnessAt(entry, 1_000, w)).toBe('fresh');
    expect(freshnessAt(entry, 60_999, w)).toBe('fresh');
    expect(freshnessAt(entry, 61_000, w)).toBe('grace');
    expect(freshnessAt(entry, 70_999, w)).toBe('grace');
    expect(freshnessAt(entry, 71_000, w)).toBe('stale-if-error');
    expect(freshnessAt(entry, 360_999, w)).toBe('stale-if-error');
    expect(freshnessAt(entry, 361_000, w)).toBe('dead');
  });

  it('a grace window longer than stale-if-error: no stale-if-error phase', () => {
    const ww = { graceMs: 30_000, staleIfErrorMs: 5_000 };
    expect(freshnessAt(e(0, 1_000), 20_000, ww)).toBe('grace');
    expect(freshnessAt(e(0, 1_000), 31_000, ww)).toBe('dead');
    expect(keepMs(e(0, 1_000), ww)).toBe(31_000);
  });

  it('a reader whose clock is behind the writer sees the entry fresh, with Age 0', () => {
    const entry = e(10_000, 5_000);
    expect(freshnessAt(entry, 9_000, w)).toBe('fresh');
    expect(ageSeconds(entry, 9_000)).toBe(0);
    expect(ageSeconds(entry, 12_999)).toBe(2);
  });
});

describe('lifetimes (Redis PX, and what a copied entry keeps locally)', () => {
  it('a fresh fetch is kept ttl + the longer stale window', () => {
    expect(keepMs(e(0, 60_000), w)).toBe(360_000);
    expect(remainingKeepMs(e(5_000, 60_000), 5_000, w)).toBe(360_000);
  });

  it('an entry copied later keeps only what is left, rounded up, never 0 while alive', () => {
    expect(remainingKeepMs(e(0, 60_000), 100_000, w)).toBe(260_000);
    expect(remainingKeepMs(e(0, 60_000), 359_999.5, w)).toBe(1);
    expect(remainingKeepMs(e(0.25, 10), 5, { graceMs: 0, staleIfErrorMs: 0 })).toBe(6);
  });

  it('past every window there is nothing left to keep', () => {
    expect(remainingKeepMs(e(0, 60_000), 360_000, w)).toBe(0);
    expect(remainingKeepMs(e(0, 60_000), 1e12, w)).toBe(0);
  });

  it('a writer clock ahead of ours never makes an entry live longer than its whole window', () => {
    expect(remainingKeepMs(e(1_000_000, 60_000), 0, w)).toBe(360_000);
  });

  it('the local store keeps a copied entry for what is left of it, and refuses a dead one', () => {
    let now = 1_000_000;
    const store = new CacheStore({
      sharedMaxBytes: 1 << 20,
      sessionMaxBytes: 1 << 20,
      maxEntries: 100,
      graceMs: w.graceMs,
      staleIfErrorMs: w.staleIfErrorMs,
      now: () => now,
    });
    const entry = (storedAt: number): CacheEntry => ({
      status: 200,
      headers: {},
      body: Buffer.from('x'),
      storedAt,
      ttlMs: 60_000,
      urlKey: '/w/api.php?a',
      modules: [],
      slot: undefined,
      deps: [],
    });
    // Stored 300 s ago elsewhere: 60 s left of its 360 s.
    expect(store.set('shared', 'k', entry(now - 300_000))).toBe(true);
    expect(store.freshness(store.get('shared', 'k')!)).toBe('stale-if-error');
    now += 59_999;
    expect(store.freshness(store.get('shared', 'k')!)).toBe('stale-if-error');
    now += 2;
    // Dead at the same instant as in Redis (freshness decides; lru-cache keeps no lifetimes).
    expect(store.freshness(store.get('shared', 'k')!)).toBe('dead');
    expect(store.set('shared', 'dead', entry(now - 360_000))).toBe(false);
    expect(store.get('shared', 'dead')).toBeUndefined();
  });
});

describe('the local store and a writer clock ahead of ours', () => {
  it('a copied entry stored "in the future" is fresh here for its ttl from now at most, then stale, then dead', () => {
    let now = 1_000_000;
    const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, ...w, now: () => now });
    const ahead: CacheEntry = {
      status: 200,
      headers: {},
      body: Buffer.from('x'),
      storedAt: now + 3_600_000,
      ttlMs: 60_000,
      urlKey: '/w/api.php?a',
      modules: [],
      slot: undefined,
      deps: [],
    };
    expect(store.set('shared', 'k', ahead)).toBe(true);
    expect(store.freshness(store.get('shared', 'k')!)).toBe('fresh');
    now += 60_000;
    expect(store.freshness(store.get('shared', 'k')!)).toBe('grace');
    now += 300_000;
    expect(store.freshness(store.get('shared', 'k')!)).toBe('dead');
  });

  it('once its local copy is stale, that same entry from Redis does not replace it (fresh again each time): only a later one stored in our past does', () => {
    const now = 1_000_000;
    const local = e(now - 61_000, 60_000); // copied 61 s ago, now in grace
    expect(replacesLocal(e(now + 3_600_000, 60_000), local, now)).toBe(false); // the writer ahead, again
    expect(replacesLocal(e(now - 61_000, 60_000), local, now)).toBe(false); // the same entry
    expect(replacesLocal(e(now - 5_000, 60_000), local, now)).toBe(true); // refreshed by another replica
    expect(replacesLocal(e(now, 60_000), local, now)).toBe(true);
  });
});

describe('redis key names and purge messages', () => {
  const k = redisKeys('wikiedge:');
  it('entries, locks, session and module indexes are hashed; the URL index is the URL (for prefix SCAN)', () => {
    const key = 's:SLOTHMAC:0\n/w/api.php?action=query&meta=userinfo\nhttp\n-\n-';
    expect(k.entry(key)).toMatch(/^wikiedge:e:[0-9a-f]{64}$/);
    expect(k.lock(key)).toMatch(/^wikiedge:l:[0-9a-f]{64}$/);
    expect(k.entry(key).slice(11)).toBe(k.member(key));
    expect(k.slot('SLOTHMAC')).toMatch(/^wikiedge:s:[0-9a-f]{64}$/);
    expect(k.module('wbavailablebadges')).toMatch(/^wikiedge:m:[0-9a-f]{64}$/);
    expect(k.url('/w/api.php?action=query')).toBe('wikiedge:u:/w/api.php?action=query');
    expect(k.channel).toBe('wikiedge:purge');
  });

  it('escapes SCAN glob characters of a prefix', () => {
    expect(globEscape('/w/api.php?action=query&list=[x]*\\')).toBe('/w/api.php\\?action=query&list=\\[x\\]\\*\\\\');
  });

  it('accepts only well-formed purge messages', () => {
    expect(parsePurgeMessage('{"kind":"url","urlKey":"/w/api.php?a=1","from":"x"}')).toEqual({
      kind: 'url',
      urlKey: '/w/api.php?a=1',
    });
    expect(parsePurgeMessage('{"kind":"slot","slot":"abc"}')).toEqual({ kind: 'slot', slot: 'abc' });
    expect(parsePurgeMessage('{"kind":"all"}')).toEqual({ kind: 'all' });
    expect(parsePurgeMessage('{"kind":"slot","slot":""}')).toBeUndefined();
    expect(parsePurgeMessage('{"kind":"module","module":7}')).toBeUndefined();
    expect(parsePurgeMessage('{"kind":"drop"}')).toBeUndefined();
    expect(parsePurgeMessage('not json')).toBeUndefined();
  });
});
