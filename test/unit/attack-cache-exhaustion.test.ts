// Attack class 11: random parameters cannot push hot entries out beyond the budget's LRU order,
// and many sessions cannot starve the shared tier (separate budgets).
import { describe, expect, it } from 'vitest';
import { type CacheEntry, CacheStore, entrySize, headerSetSize } from '../../src/cache/store.js';

const entry = (urlKey: string, bytes: number, slot?: string): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.alloc(bytes),
  storedAt: 1_000,
  ttlMs: 60_000,
  urlKey,
  modules: ['query'],
  slot,
  deps: [],
});

/** What the entries and their header sets are charged: the table's and the views' own charges aside. */
const entryBytes = (s: CacheStore) => {
  const { bytes, tableBytes, viewBytes } = s.stats('shared');
  return bytes - tableBytes - viewBytes;
};

function store() {
  return new CacheStore({
    sharedMaxBytes: 200_000,
    sessionMaxBytes: 100_000,
    maxEntries: 10_000,
    graceMs: 0,
    staleIfErrorMs: 0,
    now: () => 2_000,
  });
}

describe('cache exhaustion', () => {
  it('a flood of random one-off keys evicts least-recently-used entries, never a hot one that keeps being read', () => {
    const s = store();
    s.set('shared', 'hot', entry('/w/api.php?hot', 1_000));
    for (let i = 0; i < 5_000; i++) {
      s.set('shared', `junk${i}`, entry(`/w/api.php?junk=${i}`, 1_000));
      if (i % 50 === 0) expect(s.get('shared', 'hot'), `after ${i}`).toBeDefined();
    }
    expect(s.get('shared', 'hot')).toBeDefined();
    expect(s.stats('shared').bytes).toBeLessThanOrEqual(200_000);
  });

  it('many sessions fill only the session budget; the shared tier keeps every entry', () => {
    const s = store();
    for (let i = 0; i < 50; i++) s.set('shared', `pub${i}`, entry(`/w/api.php?p=${i}`, 1_000));
    for (let i = 0; i < 10_000; i++) s.set('session', `sess${i}`, entry(`/w/api.php?q=${i}`, 1_000, `slot${i % 997}`));
    expect(s.stats('shared').entries).toBe(50);
    expect(s.stats('session').bytes).toBeLessThanOrEqual(100_000);
  });

  it('an entry larger than the budget is not stored and evicts nothing', () => {
    const s = store();
    s.set('shared', 'a', entry('/w/api.php?a', 1_000));
    expect(s.set('shared', 'huge', entry('/w/api.php?huge', 500_000))).toBe(false);
    expect(s.get('shared', 'a')).toBeDefined();
  });

  it('a header set shared by entries is charged once, while any of them holds it; every distinct set is charged', () => {
    const s = store();
    const headers = (i: number) => ({ 'content-type': 'application/json', 'access-control-allow-origin': `https://site-${i}.example` });
    const e = (i: number, h: number) => ({ ...entry(`/w/api.php?e=${i}`, 1_000), headers: headers(h) });
    s.set('shared', 'a', e(1, 1));
    s.set('shared', 'b', e(2, 1));
    const set = headerSetSize(headers(1));
    expect(entryBytes(s)).toBe(entrySize('a', e(1, 1)) + entrySize('b', e(2, 1)) + set);
    s.delete('shared', 'a');
    expect(entryBytes(s)).toBe(entrySize('b', e(2, 1)) + set);
    s.delete('shared', 'b');
    expect(entryBytes(s)).toBe(0);
    // Replaced by an entry with the same set: charged once still.
    s.set('shared', 'c', e(3, 1));
    s.set('shared', 'c', e(3, 1));
    expect(entryBytes(s)).toBe(entrySize('c', e(3, 1)) + set);
    // A set of its own per entry: the budget holds fewer, and the count never passes it.
    for (let i = 0; i < 1_000; i++) s.set('shared', `d${i}`, e(i, 100 + i));
    const { bytes, entries } = s.stats('shared');
    expect(bytes).toBeLessThanOrEqual(200_000);
    expect(entries).toBeLessThan(Math.ceil(200_000 / (entrySize('d999', e(999, 1099)) + headerSetSize(headers(1099)))) + 1);
  });

  it('an entry that fits the budget only without its header set is not stored', () => {
    const s = new CacheStore({ sharedMaxBytes: 5_000, sessionMaxBytes: 5_000, maxEntries: 10, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });
    const base = entry('/w/api.php?x', 1_000);
    const fill = 5_000 - entrySize('x', base);
    const big = { ...base, headers: { 'x-big': 'v'.repeat(fill) } };
    expect(entrySize('x', big)).toBeLessThanOrEqual(5_000);
    expect(s.set('shared', 'x', big)).toBe(false);
    expect(s.stats('shared').entries).toBe(0);
    expect(entryBytes(s)).toBe(0);
  });
});
