// An entry is kept only if it fits the budget together with its header set, even when another
// entry holds that set at the moment (store.ts Tiered.set): lru-cache may evict that other entry
// to make room, after which the set is this entry's to pay. It was stored, popped by the budget
// loop right after, and indexed all the same (set() said true; the indexes kept a key the LRU
// did not hold).
import { describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore, entrySize, headerSetSize } from '../../src/cache/store.js';

const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=600, public', 'x-big': 'h'.repeat(300) };
const entry = (i: number, bodyBytes: number): CacheEntry => ({
  status: 200,
  headers,
  body: Buffer.alloc(bodyBytes, 0x61),
  storedAt: 1_000,
  ttlMs: 60_000,
  urlKey: `/w/api.php?i=${i}`,
  modules: ['query'],
  slot: undefined,
  deps: ['*'],
});

describe('an entry and its header set', () => {
  it('is refused when it fits only without its set, though another entry holds the set now', () => {
    const small = entry(0, 100);
    const set = headerSetSize(headers);
    // The table's own charge (its first buckets, store.ts stats) is part of the budget too.
    const table = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 }).stats(
      'shared',
    ).tableBytes;
    const budget = entrySize('k0', small) + set + table + 50;
    const store = new CacheStore({ sharedMaxBytes: budget, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
    expect(store.set('shared', 'k0', small)).toBe(true);
    // Fits the budget alone, not with the set: refused, whoever holds the set now.
    const big = entry(1, budget - table - entrySize('k1', entry(1, 0)) - set + 10);
    expect(entrySize('k1', big)).toBeLessThanOrEqual(budget);
    expect(store.set('shared', 'k1', big)).toBe(false);
    expect(store.get('shared', 'k1')).toBeUndefined();
    // Nothing indexed for it: a purge of its URL finds nothing.
    expect(store.purgeUrl(big.urlKey)).toBe(0);
    expect(store.stats('shared').bytes).toBeLessThanOrEqual(budget);
  });
});
