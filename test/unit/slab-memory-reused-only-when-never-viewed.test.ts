// A dropped slab's memory is the next slab's only when no view of it was ever made
// (src/cache/slab-arena.ts, `spare`): a miss-only workload writes into memory already mapped,
// and a response still writing a view of a dropped slab never sees another entry's bytes.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SlabArena } from '../../src/cache/slab-arena.js';

const SLAB = 1024;
/** A region of `length` bytes filled with `fill`, written at once as the store does. */
function place(arena: SlabArena, length: number, fill: number): { chunk: number; offset: number; length: number } {
  const chunk = arena.alloc(length);
  const offset = arena.offset;
  arena.buffer(chunk).fill(fill, offset, offset + length);
  return { chunk, offset, length };
}

describe('slab memory', () => {
  it('a slab dropped before any view of it was made is the next slab, counted while it waits', () => {
    const arena = new SlabArena({ slabBytes: SLAB, maxWasteRatio: 0.1 }, () => {});
    // Sixteen regions fill the first slab exactly; the seventeenth begins the second.
    const first = Array.from({ length: 16 }, () => place(arena, 64, 1));
    const firstMemory = arena.buffer(first[0]!.chunk).buffer;
    expect(arena.buffer(place(arena, 64, 2).chunk).buffer).not.toBe(firstMemory);
    for (const r of first) arena.release(r.chunk, r.length);
    // Dropped, kept aside: the memory the stats count still holds it.
    expect(arena.stats()).toMatchObject({ slabs: 1, spareBytes: SLAB });
    for (let i = 0; i < 15; i++) place(arena, 64, 3);
    const next = place(arena, 64, 4);
    expect(arena.buffer(next.chunk).buffer).toBe(firstMemory);
    expect(arena.stats()).toMatchObject({ slabs: 2, spareBytes: 0 });
  });

  it('a slab a view was made of is never reused: the view keeps its bytes through any later writes', () => {
    const arena = new SlabArena({ slabBytes: SLAB, maxWasteRatio: 0.1 }, () => {});
    const first = Array.from({ length: 16 }, (_, i) => place(arena, 64, i));
    const seen = arena.view(first[5]!.chunk, first[5]!.offset, 64);
    const firstMemory = arena.buffer(first[0]!.chunk).buffer;
    place(arena, 64, 99);
    for (const r of first) arena.release(r.chunk, r.length);
    expect(arena.stats().spareBytes).toBe(0);
    for (let i = 0; i < 200; i++) expect(arena.buffer(place(arena, 64, 99).chunk).buffer).not.toBe(firstMemory);
    expect(seen.every((b) => b === 5)).toBe(true);
  });

  it('whatever the order of writes, views and releases, every view keeps the bytes it was made with', () => {
    // Releases as frequent as placements: slabs empty, drop and come back as spares often.
    const op = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('place' as const), length: fc.integer({ min: 1, max: 64 }) }), weight: 4 },
      { arbitrary: fc.record({ kind: fc.constant('view' as const), which: fc.nat() }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constant('release' as const), which: fc.nat() }), weight: 4 },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 200, maxLength: 1000 }), (ops) => {
        const arena = new SlabArena({ slabBytes: SLAB, maxWasteRatio: 0.1 }, () => {});
        const held: { chunk: number; offset: number; length: number; fill: number }[] = [];
        const views: { view: Buffer; fill: number }[] = [];
        let fill = 0;
        for (const o of ops) {
          if (o.kind === 'place') {
            fill = (fill + 1) & 0xff;
            held.push({ ...place(arena, o.length, fill), fill });
          } else if (held.length > 0) {
            const i = o.which % held.length;
            const r = held[i]!;
            if (o.kind === 'view') views.push({ view: arena.view(r.chunk, r.offset, r.length), fill: r.fill });
            else {
              arena.release(r.chunk, r.length);
              held.splice(i, 1);
            }
          }
        }
        for (const v of views) expect(v.view.every((b) => b === v.fill)).toBe(true);
        for (const r of held)
          expect(
            arena
              .buffer(r.chunk)
              .subarray(r.offset, r.offset + r.length)
              .every((b) => b === r.fill),
          ).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
