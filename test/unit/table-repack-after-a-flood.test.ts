// Records freed and not reused keep their memory and are charged (tier.ts tableBytes): after a
// flood of small entries gives way to large ones, or a purge of many, the table is renumbered
// (entry-table.ts repack) so that the budget is not shrunk for good, and every entry, index and
// kept view still answers for its own entry.
import { describe, expect, it } from 'vitest';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

const entry = (i: number, bytes: number, slot?: string): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.alloc(bytes, i & 0xff),
  storedAt: 1_000,
  ttlMs: 60_000,
  urlKey: `/w/api.php?i=${i}`,
  modules: ['query'],
  slot,
  deps: [`p:${i % 10}`],
});
const budget = 4 << 20;
const newStore = () =>
  new CacheStore({ sharedMaxBytes: budget, sessionMaxBytes: budget, maxEntries: 1_000_000, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });

describe('the table after a flood of small entries', () => {
  it('large entries evicting the small ones get the whole budget back', () => {
    const s = newStore();
    for (let i = 0; i < 40_000; i++) s.set('shared', `small${i}`, entry(i, 10));
    const flooded = s.stats('shared').entries;
    expect(flooded).toBeGreaterThan(10_000);
    // A kept view, read before the repacks.
    for (let i = 0; i < 300; i++) s.set('shared', `big${i}`, entry(i, 12_000));
    const view = s.get('shared', 'big299')!;
    for (let i = 300; i < 600; i++) s.set('shared', `big${i}`, entry(i, 12_000));
    const stats = s.stats('shared');
    // Without the repack, ~all the records the flood used would still be charged.
    expect(stats.tableBytes).toBeLessThan(budget / 32);
    expect(stats.entries).toBeGreaterThan((budget * 0.9) / 12_500);
    let held = 0;
    for (let i = 0; i < 600; i++) {
      const e = s.get('shared', `big${i}`);
      if (!e) continue;
      held++;
      expect(e.body.equals(Buffer.alloc(12_000, i & 0xff)), `big${i}`).toBe(true);
      expect(e.urlKey).toBe(`/w/api.php?i=${i}`);
    }
    // (Reading keeps a view of each, charged: a few of the oldest make room for them.)
    expect(held).toBeGreaterThan((budget * 0.85) / 12_500);
    expect(s.get('shared', 'big299')).toBe(view);
    // The indexes were renumbered with the records: a purge by URL and by tag finds its own.
    expect(s.purgeUrl('/w/api.php?i=599')).toBe(1);
    expect(s.get('shared', 'big599')).toBeUndefined();
    const tagged = [...Array(599).keys()].filter((i) => i % 10 === 3 && s.get('shared', `big${i}`) !== undefined);
    expect(tagged.length).toBeGreaterThan(0);
    expect(s.invalidate(['p:3'])).toBe(tagged.length);
    for (const i of tagged) expect(s.get('shared', `big${i}`)).toBeUndefined();
  });

  it('an entry of a third of the budget after the flood is stored: the records the small ones leave are given back first', () => {
    const s = new CacheStore({ sharedMaxBytes: 1_000_000, sessionMaxBytes: 1_000_000, maxEntries: 1_000_000, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });
    for (let i = 0; i < 20_000; i++) s.set('shared', `k${i}`, entry(i, 10));
    expect(s.stats('shared').entries).toBeGreaterThan(4_000);
    // Failed before: every small entry evicted, their records still
    // charged, and the large one refused.
    expect(s.set('shared', 'big', entry(1, 600_000))).toBe(true);
    expect(s.get('shared', 'big')!.body.length).toBe(600_000);
    expect(s.stats('shared').bytes).toBeLessThanOrEqual(1_000_000);
  });

  it('a purge of most of a session tier renumbers it; the sessions left keep their entries', () => {
    const s = newStore();
    for (let i = 0; i < 20_000; i++) s.set('session', `k${i}`, entry(i, 10, `slot${i % 50}`));
    const held = (slot: number) => [...Array(20_000).keys()].filter((i) => i % 50 === slot && s.get('session', `k${i}`)).length;
    const left = [45, 46, 47, 48, 49].map(held);
    for (let slot = 0; slot < 45; slot++) s.evictSession(`slot${slot}`);
    const stats = s.stats('session');
    expect(stats.entries).toBe(left.reduce((a, b) => a + b));
    expect(stats.tableBytes).toBeLessThan(budget / 32);
    for (let i = 0; i < 20_000; i++) {
      const e = s.get('session', `k${i}`);
      if (i % 50 < 45) expect(e).toBeUndefined();
      else if (e) expect(e.slot).toBe(`slot${i % 50}`);
    }
    expect(s.evictSession('slot49')).toBe(left[4]);
    expect(left[4]).toBeGreaterThan(0);
  });
});
