// Attack class 11: random parameters cannot push hot entries out beyond the budget's LRU order,
// and many sessions cannot starve the shared tier (separate budgets).
import { describe, expect, it } from 'vitest';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

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
});
