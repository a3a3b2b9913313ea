// Stored bodies live in slabs (src/cache/arena.ts): bytes are copied exactly, compaction moves
// them without changing a byte, memory handed out is never rewritten (a response still writing
// an old view sends what it started with), holes are compacted away and tails never make it
// compact in circles.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type BodyHolder, BodyArena } from '../../src/cache/arena.js';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

const SLAB = 16_384; // bodies up to 1 KiB go into slabs
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
    expect(a.stats()).toMatchObject({ slabs: 1, slabBytes: SLAB, liveBytes: 100, ownBytes: 0, holeBytes: 0, slabsAllocated: 1 });
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

  it('a body above 1/16 slab gets an exact allocation of its own', () => {
    const a = arena();
    const h = holder(2, SLAB / 16 + 1);
    a.place(h);
    expect(h.body.byteOffset).toBe(0);
    expect(h.body.buffer.byteLength).toBe(SLAB / 16 + 1);
    expect(h.body.equals(pattern(2, SLAB / 16 + 1))).toBe(true);
    expect(a.stats()).toMatchObject({ slabs: 0, ownBytes: SLAB / 16 + 1 });
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
    const hs = Array.from({ length: 48 }, (_, i) => holder(i, 1000)); // 16 per slab: 3 slabs
    for (const h of hs) a.place(h);
    expect(a.stats().slabs).toBe(3);
    for (const h of hs.slice(0, 16)) a.release(h);
    expect(a.stats()).toMatchObject({ slabs: 2, slabBytes: 2 * SLAB, liveBytes: 32_000 });
  });

  it('compaction moves live bodies byte for byte and never rewrites the memory a response may still be sending', () => {
    const a = arena();
    const hs = Array.from({ length: 160 }, (_, i) => holder(i, 1000)); // 10 slabs
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
    expect(after.holeBytes).toBeLessThan(before.holeBytes);
    kept.forEach((h, j) => {
      expect(h.body.equals(pattern(j * 4, 1000)), `body ${j * 4}`).toBe(true);
      expect(inFlight[j]!.equals(pattern(j * 4, 1000)), `in-flight view ${j * 4}`).toBe(true);
    });
    expect(kept.some((h, j) => h.body.buffer !== inFlight[j]!.buffer)).toBe(true);
  });

  it('tails (a body that did not fit at the end of a slab) are not holes: all-live slabs are never compacted', () => {
    // 16 bodies per slab and 384 bytes left over in each: 200 slabs leave ~4.7 slabs of tails,
    // more than the 2 slabs of slack. With no waste allowed there is still nothing to compact:
    // moving the bodies would only make the same tails again.
    const a = new BodyArena({ slabBytes: SLAB, maxWasteRatio: 0 });
    const size = 1000;
    const hs = Array.from({ length: 3200 }, (_, i) => holder(i, size));
    for (const h of hs) a.place(h);
    expect(a.stats()).toMatchObject({ slabsAllocated: 200, holeBytes: 0, liveBytes: 3200 * size });
    expect(a.stats().tailBytes).toBeGreaterThan(2 * SLAB);
    hs.forEach((h, i) => expect(h.body.equals(pattern(i, size))).toBe(true));
  });

  it('under any sequence of stores and releases: every held body keeps its bytes, the counts add up, and a store never adds holes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 1500 }), fc.nat()), { minLength: 1, maxLength: 400 }),
        (ops) => {
          const a = arena();
          const held = new Map<number, BodyHolder>();
          let next = 0;
          for (const [store, length, pick] of ops) {
            if (store || held.size === 0) {
              const id = next++;
              const h = holder(id, length);
              const before = a.stats();
              a.place(h);
              held.set(id, h);
              const after = a.stats();
              expect(after.holeBytes).toBeLessThanOrEqual(before.holeBytes);
              expect(after.holeBytes).toBeGreaterThanOrEqual(0);
              expect(after.tailBytes).toBeLessThanOrEqual(after.slabs * (SLAB / 16));
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
            if (h.body.length > SLAB / 16) own += h.body.length;
            else live += h.body.length;
          }
          const s = a.stats();
          expect(s.liveBytes).toBe(live);
          expect(s.ownBytes).toBe(own);
          for (const h of held.values()) a.release(h);
          expect(a.stats()).toMatchObject({ liveBytes: 0, ownBytes: 0 });
          expect(a.stats().slabs).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('churn with hot bodies pinning old slabs: holes are compacted away, at a bounded copying cost', () => {
    const a = arena();
    const held: BodyHolder[] = [];
    let placed = 0;
    for (let i = 0; i < 20_000; i++) {
      const h = holder(i, 200 + (i % 800));
      a.place(h);
      placed += h.body.length;
      held.push(h);
      // An LRU of ~1,000 bodies, where every 10th body stays (hot) for much longer.
      if (held.length > 1_000) {
        const j = held.findIndex((x, k) => k < held.length - 1_000 || (x.body.length % 10 !== 0 && k < held.length - 1_000));
        const victim = held.splice(j === -1 ? 0 : j, 1)[0]!;
        a.release(victim);
      }
    }
    const s = a.stats();
    expect(s.holeBytes).toBeLessThanOrEqual(s.liveBytes * 0.1 + 2 * SLAB + s.slabs * (SLAB / 8));
    // Slabs allocated, in bytes, against the bytes placed: compaction's copies stay a small multiple.
    expect(s.slabsAllocated * SLAB).toBeLessThan(placed * 3);
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
    deps: [],
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
    expect(stats.slabBytes).toBeLessThanOrEqual(stats.bytes * 1.1 + 2 * 128 * 1024);
  });

  it('the store keeps its own copy of what it is given: the caller\'s buffer can change, and one entry stored under several keys and tiers is tracked once per key', () => {
    const s = new CacheStore({ sharedMaxBytes: 10_000_000, sessionMaxBytes: 10_000_000, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 2_000 });
    const e = entry(1, 500);
    expect(s.set('shared', 'a', e)).toBe(true);
    expect(s.set('shared', 'b', e)).toBe(true);
    expect(s.set('session', 'c', e)).toBe(true);
    expect(s.set('shared', 'a', e)).toBe(true); // the same key again: replaces, not adds
    e.body.fill(0); // the caller's buffer (a pooled read buffer, say) is reused
    const a = s.get('shared', 'a')!;
    const b = s.get('shared', 'b')!;
    expect(a).not.toBe(e);
    expect(a).not.toBe(b);
    for (const stored of [a, b, s.get('session', 'c')!]) {
      expect(stored.body.equals(pattern(1, 500))).toBe(true);
      expect({ ...stored.headers }).toEqual(e.headers);
      expect([stored.status, stored.storedAt, stored.ttlMs, stored.urlKey, stored.slot]).toEqual([200, 1_000, 60_000, '/w/api.php?i=1', undefined]);
    }
    expect(s.stats('shared').bodyBytes).toBe(1000);
    expect(s.stats('session').bodyBytes).toBe(500);
    s.purgeWhere(() => true);
    expect(s.stats('shared').bodyBytes + s.stats('session').bodyBytes).toBe(0);
    // Nothing left tracked: at most each tier's newest slab (1/64 of its 10 MB budget) stays.
    expect(s.stats('shared').slabBytes + s.stats('session').slabBytes).toBeLessThanOrEqual(2 * (10_000_000 / 64));
    s.set('shared', 'd', entry(2, 500)); // and the next store does not find stale counts
    expect(s.stats('shared').slabBytes).toBeLessThanOrEqual(10_000_000 / 64);
    for (const k of ['a', 'b']) expect(s.get('shared', k)).toBeUndefined();
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
