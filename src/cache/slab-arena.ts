/**
 * Where stored entries' bytes live (their key, their body, their br form): copied into large
 * slabs instead of one allocation per entry, addressed by numbers (a chunk id and an offset) so
 * that the entry table (entry-table.ts) holds them in typed arrays, off the JS heap.
 *
 * Why slabs (bench/memory.mjs, docs/BENCHMARKS.md "memory"): a body in its own Buffer costs
 * ~550 bytes besides its bytes (the ArrayBuffer's backing store, its bookkeeping, malloc's
 * header), and, worse, once the LRU starts evicting, the freed 1 KiB chunks sit between live ones
 * in malloc's heap and are never returned: a store filled past a 50 MB budget grew the process by
 * 174 MB. Slabs are allocated whole and dropped whole, so what the entries hold stays close to
 * what the budget counts.
 *
 * The one rule that keeps it safe: slab memory that was ever seen outside the arena is never
 * reused. Allocation only moves forward in the newest slab; a slab whose regions are all gone is
 * dropped (its chunk id may name a new slab later). A response still writing a view of a dropped
 * or compacted slab keeps that slab alive (the view holds it) and its bytes cannot change under
 * it: no entry's bytes can ever show through another's. The one exception is a slab no view was
 * ever made of (view() is the only way its bytes leave the arena; buffer() is for reading and
 * writing at once): the last such one dropped is kept as the next slab (`spare`), so that a
 * miss-only workload (a cache-busting flood, a long tail, the hour after a deploy) writes into
 * memory already mapped instead of faulting a fresh mapping in, page by page, for every slab
 * (~0.6 faults per stored 2 KB answer: docs/BENCHMARKS.md, runs AC and AJ).
 *
 * Waste is bounded by compaction. Two kinds: the tail a slab is left with when the next region
 * does not fit (at most a region's size: regions above 1/16 slab get an allocation of their own,
 * so tails stay under ~6 %, and compaction would only make new ones), and holes left by regions
 * no longer stored, which compaction removes. When holes exceed `maxWasteRatio` of the live bytes
 * (plus two slabs of slack), the slab with the most holes (at least an eighth of a slab, so each
 * move frees at least that much) has its live regions copied into the newest slab by its owner
 * (`relocate`: the arena does not know which entries live where; the table finds them).
 *
 * A slow response keeps the whole slab its view belongs to alive (up to 1 MiB) until it is
 * written, even after the slab is dropped; connection timeouts bound how long.
 */

export interface ArenaOptions {
  /** Bytes per slab. Regions above 1/16 of it get an allocation of their own. */
  readonly slabBytes: number;
  /** Holes allowed, as a fraction of the live bytes (0.1: 10 %), before compacting. */
  readonly maxWasteRatio: number;
}

export interface ArenaStats {
  readonly slabs: number;
  /** Bytes allocated for slabs. */
  readonly slabBytes: number;
  /** Bytes of regions held in slabs. */
  readonly liveBytes: number;
  /** Bytes of regions too large for a slab, held in allocations of their own. */
  readonly ownBytes: number;
  /** Bytes of slabs once held by regions no longer stored (what compaction removes). */
  readonly holeBytes: number;
  /** Bytes left at the ends of slabs where the next region did not fit. */
  readonly tailBytes: number;
  /** Slabs allocated since the start (compaction's cost shows here). */
  readonly slabsAllocated: number;
  /** Bytes of the dropped slab kept to be the next one (no view of it was ever made). */
  readonly spareBytes: number;
}

/** At most this many slabs compacted per placement: the cost of one store stays bounded. */
const MAX_COMPACTIONS_PER_PLACE = 4;

interface Chunk {
  readonly buf: Buffer;
  /** An allocation of its own (one region), not a slab. */
  readonly own: boolean;
  /** Bytes handed out (the bump pointer). */
  used: number;
  /** Bytes of regions still held. */
  live: number;
  /** Bytes left unused at the end when the slab stopped being the newest. */
  tail: number;
  /** A view of it was made (view()): its memory is never reused. */
  viewed: boolean;
}

export class SlabArena {
  /** Chunk id → its slab or own allocation; ids of dropped chunks are given to new ones. */
  private readonly chunks: (Chunk | undefined)[] = [];
  private readonly freeIds: number[] = [];
  private current = -1;
  private slabTotal = 0;
  private slabCount = 0;
  private liveTotal = 0;
  private ownTotal = 0;
  private tailTotal = 0;
  private allocated = 0;
  /** A dropped slab no view was ever made of: the next slab (see the module comment). */
  private spare: Buffer | undefined;
  private readonly largest: number;
  /** Set by alloc(): where the region it handed out begins in `chunk`'s buffer. */
  offset = 0;

  /**
   * `relocate(chunk)`: the owner moves every region it holds in that chunk (alloc(), copy, then
   * release() of the old place) and points its entries at the copies.
   */
  constructor(
    private readonly opts: ArenaOptions,
    private readonly relocate: (chunk: number) => void,
  ) {
    if (!Number.isInteger(opts.slabBytes) || opts.slabBytes < 1024) throw new RangeError('slabBytes must be an integer >= 1024');
    if (!(opts.maxWasteRatio >= 0)) throw new RangeError('maxWasteRatio must be >= 0');
    this.largest = Math.floor(opts.slabBytes / 16);
  }

  /** Room for `length` bytes: the chunk id (its buffer: buffer()), the offset in `offset`. Write it at once. */
  alloc(length: number): number {
    if (length > this.largest) {
      // Its own exact-size allocation. From 128 KiB up it is a mapping of its own (with
      // MALLOC_MMAP_THRESHOLD_=131072) and returns to the OS when freed; smaller ones (1/16
      // slab to 128 KiB) come from malloc's heap, where large chunks are reused whole.
      const id = this.add({ buf: Buffer.allocUnsafeSlow(length), own: true, used: length, live: length, tail: 0, viewed: true });
      this.ownTotal += length;
      this.offset = 0;
      return id;
    }
    let id = this.current;
    let slab = id < 0 ? undefined : this.chunks[id]!;
    if (!slab || slab.used + length > slab.buf.length) {
      id = this.newSlab();
      slab = this.chunks[id]!;
    }
    this.offset = slab.used;
    slab.used += length;
    slab.live += length;
    this.liveTotal += length;
    return id;
  }

  /**
   * The whole buffer of `chunk`, to write or read at once. Never keep it, nor a subarray of it:
   * bytes that leave the arena do so through view(), which marks the slab seen (a slab never
   * seen may be reused once dropped: see the module comment).
   */
  buffer(chunk: number): Buffer {
    return this.chunks[chunk]!.buf;
  }

  /** A view of `length` bytes at `offset` of `chunk`: valid (and unchanged) for as long as it is held. */
  view(chunk: number, offset: number, length: number): Buffer {
    const c = this.chunks[chunk]!;
    c.viewed = true;
    const buf = c.buf;
    return Buffer.from(buf.buffer, buf.byteOffset + offset, length);
  }

  /** The region of `length` bytes in `chunk` is no longer stored. Views of it stay readable. */
  release(chunk: number, length: number): void {
    const c = this.chunks[chunk];
    if (!c) return;
    if (c.own) {
      this.ownTotal -= length;
      this.drop(chunk);
      return;
    }
    c.live -= length;
    this.liveTotal -= length;
    if (c.live === 0 && chunk !== this.current) this.drop(chunk);
  }

  /** Compact while holes exceed the bound (a few slabs at most): call after a placement is written. */
  compact(): void {
    for (let i = 0; i < MAX_COMPACTIONS_PER_PLACE && this.tooWasteful(); i++) if (!this.compactMostHoled()) break;
  }

  stats(): ArenaStats {
    return {
      slabs: this.slabCount,
      slabBytes: this.slabTotal,
      liveBytes: this.liveTotal,
      ownBytes: this.ownTotal,
      holeBytes: this.holeTotal(),
      tailBytes: this.tailTotal,
      slabsAllocated: this.allocated,
      spareBytes: this.spare?.length ?? 0,
    };
  }

  private add(chunk: Chunk): number {
    const id = this.freeIds.pop() ?? this.chunks.length;
    this.chunks[id] = chunk;
    return id;
  }

  /** Slab bytes neither live, nor a tail, nor the newest slab's free space. */
  private holeTotal(): number {
    const c = this.current < 0 ? undefined : this.chunks[this.current];
    const fresh = c ? c.buf.length - c.used : 0;
    return this.slabTotal - this.liveTotal - this.tailTotal - fresh;
  }

  private holesOf(id: number, c: Chunk): number {
    return id === this.current || c.own ? 0 : c.buf.length - c.live - c.tail;
  }

  private newSlab(): number {
    const previousId = this.current;
    const previous = previousId < 0 ? undefined : this.chunks[previousId];
    if (previous) {
      previous.tail = previous.buf.length - previous.used;
      this.tailTotal += previous.tail;
    }
    const buf = this.spare ?? Buffer.allocUnsafeSlow(this.opts.slabBytes);
    this.spare = undefined;
    const id = this.add({ buf, own: false, used: 0, live: 0, tail: 0, viewed: false });
    this.slabTotal += this.opts.slabBytes;
    this.slabCount++;
    this.allocated++;
    this.current = id;
    // The slab it replaces may already be empty: nothing else would drop it.
    if (previous && previous.live === 0) this.drop(previousId);
    return id;
  }

  private drop(id: number): void {
    const c = this.chunks[id]!;
    this.chunks[id] = undefined;
    this.freeIds.push(id);
    if (c.own) return;
    this.slabTotal -= c.buf.length;
    this.slabCount--;
    this.tailTotal -= c.tail;
    if (this.current === id) this.current = -1;
    if (!c.viewed) this.spare = c.buf;
  }

  private tooWasteful(): boolean {
    return this.holeTotal() > this.liveTotal * this.opts.maxWasteRatio + 2 * this.opts.slabBytes;
  }

  /** Moves the live regions of the slab with the most holes to the newest slab; false when none is worth it. */
  private compactMostHoled(): boolean {
    let victim = -1;
    let most = 0;
    for (let id = 0; id < this.chunks.length; id++) {
      const c = this.chunks[id];
      if (c && this.holesOf(id, c) > most) {
        victim = id;
        most = this.holesOf(id, c);
      }
    }
    // An eighth of a slab at least: every move frees that much for at most 7/8 of a slab copied.
    if (victim < 0 || most < this.opts.slabBytes / 8) return false;
    const c = this.chunks[victim]!;
    // Its tail counts as neither live nor hole once it is being emptied; the owner's releases
    // bring `live` to 0, which drops it.
    this.tailTotal -= c.tail;
    c.tail = 0;
    // The owner's releases bring its `live` to 0, which drops it (release()).
    this.relocate(victim);
    return this.chunks[victim] !== c;
  }
}
