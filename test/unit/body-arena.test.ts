// Stored bodies live in slabs (src/cache/arena.ts): bytes are copied exactly, compaction moves
// them without changing a byte, memory handed out is never rewritten (a response still writing
// an old view sends what it started with), and the slabs stay within the waste bound.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BodyHolder, BodyArena } from '../../src/cache/arena.js';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

const SLAB = 4096;
/** Bytes that say which body they are: any mix-up between bodies shows. */
const pattern = (id: number, length: number) => {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = (id * 31 + i) & 0xff;
  return b;
};
const holder = (id: number, length: number): BodyHolder => ({ body: pattern(id, length) });
const arena = () => new BodyArena({ slabBytes: SLAB, maxWasteRatio: 0.1 });

describe('body arena', () => {
  it('copies a body in: same bytes, in a slab, independent of the buffer it came from', () => {
    const a = arena();
    const original = pattern(1, 100);
    const h: BodyHolder = { body: original };
    a.place(h);
    expect(h.body).not.toBe(original);
    expect(h.body.buffer).not.toBe(original.buffer);
    expect(h.body.equals(pattern(1, 100))).toBe(true);
    original.fill(0);
    expect(h.body.equals(pattern(1, 100))).toBe(true);
    expect(a.stats()).toEqual({ slabs: 1, slabBytes: SLAB, liveBytes: 100, ownBytes: 0 });
  });

  it('placing the same holder twice stores it once', () => {
    const a = arena();
    const h = holder(1, 100);
    a.place(h);
    const view = h.body;
    a.place(h);
    expect(h.body).toBe(view);
    expect(a.stats().liveBytes).toBe(100);
  });

  it('a body above a quarter slab gets an exact allocation of its own', () => {
    const a = arena();
    const h = holder(2, SLAB / 4 + 1);
    a.place(h);
    expect(h.body.byteOffset).toBe(0);
    expect(h.body.buffer.byteLength).toBe(SLAB / 4 + 1);
    expect(h.body.equals(pattern(2, SLAB / 4 + 1))).toBe(true);
    expect(a.stats()).toMatchObject({ slabs: 0, ownBytes: SLAB / 4 + 1 });
    a.release(h);
    expect(a.stats().ownBytes).toBe(0);
  });

  it('releasing a holder it never placed changes nothing', () => {
    const a = arena();
    a.place(holder(1, 10));
    a.release(holder(1, 10));
    expect(a.stats().liveBytes).toBe(10);
  });

  it('a slab emptied by releases is dropped', () => {
    const a = arena();
    const hs = Array.from({ length: 12 }, (_, i) => holder(i, 1000)); // 4 per slab: 3 slabs
    for (const h of hs) a.place(h);
    expect(a.stats().slabs).toBe(3);
    for (const h of hs.slice(0, 4)) a.release(h);
    expect(a.stats()).toMatchObject({ slabs: 2, slabBytes: 2 * SLAB, liveBytes: 8000 });
  });

  it('compaction moves live bodies byte for byte and never rewrites the memory a response may still be sending', () => {
    const a = arena();
    const hs = Array.from({ length: 40 }, (_, i) => holder(i, 1000)); // 10 slabs
    for (const h of hs) a.place(h);
    // Keep one body per slab: each slab is 3/4 waste.
    const kept = hs.filter((_, i) => i % 4 === 0);
    for (const h of hs) if (!kept.includes(h)) a.release(h);
    const inFlight = kept.map((h) => h.body); // views a slow client is still being sent
    const before = a.stats();
    expect(before.slabBytes).toBe(10 * SLAB);
    a.place(holder(99, 1000)); // the next store compacts
    const after = a.stats();
    expect(after.slabBytes).toBeLessThan(before.slabBytes);
    kept.forEach((h, j) => {
      expect(h.body.equals(pattern(j * 4, 1000)), `body ${j * 4}`).toBe(true);
      expect(inFlight[j]!.equals(pattern(j * 4, 1000)), `in-flight view ${j * 4}`).toBe(true);
    });
    expect(kept.some((h, j) => h.body.buffer !== inFlight[j]!.buffer)).toBe(true);
  });

  it('under any sequence of stores and releases: every held body keeps its bytes, the counts add up, and a store never adds memory while over the waste bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 1500 }), fc.nat()), { minLength: 1, maxLength: 300 }),
        (ops) => {
          const a = arena();
          const held = new Map<number, BodyHolder>();
          let next = 0;
          for (const [store, length, pick] of ops) {
            if (store || held.size === 0) {
              const id = next++;
              const h = holder(id, length);
              const before = a.stats().slabBytes;
              const bound = a.stats().liveBytes * 1.1 + 2 * SLAB;
              a.place(h);
              held.set(id, h);
              const after = a.stats();
              if (before > bound) expect(after.slabBytes).toBeLessThanOrEqual(before);
            } else {
              const ids = [...held.keys()];
              const id = ids[pick % ids.length]!;
              a.release(held.get(id)!);
              held.delete(id);
            }
          }
          let live = 0;
          let own = 0;
          for (const [id, h] of held) {
            expect(h.body.equals(pattern(id, h.body.length))).toBe(true);
            if (h.body.length > SLAB / 4) own += h.body.length;
            else live += h.body.length;
          }
          const s = a.stats();
          expect(s.liveBytes).toBe(live);
          expect(s.ownBytes).toBe(own);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the store keeps its bodies in the arena', () => {
  const entry = (i: number, bytes: number): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: pattern(i, bytes),
    storedAt: 1_000,
    ttlMs: 60_000,
    urlKey: `/w/api.php?i=${i}`,
    modules: ['query'],
    slot: undefined,
  });

  it('through eviction churn every entry still held has its own bytes, and body memory stays near the budget', () => {
    const budget = 2 * 1024 * 1024;
    const s = new CacheStore({ sharedMaxBytes: budget, sessionMaxBytes: 1024 * 1024, maxEntries: 1_000_000, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });
    for (let i = 0; i < 20_000; i++) {
      s.set('shared', `k${i}`, entry(i, 200 + (i % 900)));
      if (i % 7 === 0) s.get('shared', `k${i - 3000}`); // keep some old entries hot: they pin old slabs
    }
    let held = 0;
    for (let i = 0; i < 20_000; i++) {
      const e = s.get('shared', `k${i}`);
      if (!e) continue;
      held++;
      expect(e.body.equals(pattern(i, 200 + (i % 900))), `k${i}`).toBe(true);
    }
    expect(held).toBeGreaterThan(1000);
    const stats = s.stats('shared');
    // The budget counts bodies and per-entry overhead; the slabs hold the bodies with ≤ 10 % waste + 2 slabs.
    expect(stats.slabBytes).toBeLessThanOrEqual(stats.bytes * 1.1 + 2 * 64 * 1024);
  });

  it('the entry count bound evicts the least recently used entry', () => {
    const s = new CacheStore({ sharedMaxBytes: 10_000_000, sessionMaxBytes: 1024 * 1024, maxEntries: 3, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });
    for (const i of [1, 2, 3]) s.set('shared', `k${i}`, entry(i, 10));
    s.get('shared', 'k1');
    s.set('shared', 'k4', entry(4, 10));
    expect(['k1', 'k2', 'k3', 'k4'].map((k) => s.get('shared', k) !== undefined)).toEqual([true, false, true, true]);
    expect(s.stats('shared').entries).toBe(3);
  });
});
