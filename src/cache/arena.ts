/**
 * Where stored bodies live: copied into large slabs instead of one allocation per entry.
 *
 * Why (bench/memory.mjs, docs/BENCHMARKS.md "memory"): a body in its own Buffer costs ~550 bytes
 * besides its bytes (the ArrayBuffer's backing store, its bookkeeping, malloc's header), and,
 * worse, once the LRU starts evicting, the freed 1 KiB chunks sit between live ones in malloc's
 * heap and are never returned: a store filled past a 50 MB budget grew the process by 174 MB.
 * Slabs are allocated whole and dropped whole, so what the bodies hold stays close to what the
 * budget counts.
 *
 * The one rule that keeps it safe: slab memory is never reused. Allocation only moves forward
 * in the newest slab; a slab whose bodies are all gone is dropped, not recycled. A response
 * still writing a body from a dropped or compacted slab keeps that slab alive (it holds a view
 * of it) and its bytes cannot change under it: no entry's bytes can ever show through another's.
 *
 * Waste is bounded by compaction. Two kinds: the tail a slab is left with when the next body
 * does not fit (at most a body's size: bodies above 1/16 slab get an allocation of their own,
 * so tails stay under ~6 %, and compaction would only make new ones), and holes left by bodies
 * no longer stored, which compaction removes. When holes exceed `maxWasteRatio` of the live
 * bytes (plus two slabs of slack), the slab with the most holes (at least an eighth of a slab,
 * so each move frees at least that much) has its live bodies copied into the newest slab and
 * their holders (the store's entries) pointed at the copies.
 *
 * One holder, one arena: a holder (entry) is placed in one arena under one key; the store
 * places its own copy of every entry it is given (store.ts StoredEntry), never the caller's.
 *
 * A slow response keeps the whole slab its view belongs to alive (up to 1 MiB) until it is
 * written, even after the slab is dropped; connection timeouts bound how long.
 */

/** What the arena keeps a body for: by default an object whose `body` it sets. */
export interface BodyHolder {
  readonly body: Buffer;
}

/**
 * Where a holder's bytes are read and set. The store's entries hold all their stored forms
 * (gzip, br) as one run of bytes, which is not their `body` (store.ts StoredEntry `region`).
 */
export interface BodyAccess<H> {
  get(holder: H): Buffer;
  set(holder: H, bytes: Buffer): void;
}

const BODY: BodyAccess<BodyHolder> = {
  get: (holder) => holder.body,
  set: (holder, body) => ((holder as { body: Buffer }).body = body),
};

export interface ArenaOptions {
  /** Bytes per slab. Bodies above 1/16 of it get an allocation of their own. */
  readonly slabBytes: number;
  /** Holes allowed, as a fraction of the live bytes (0.1: 10 %), before compacting. */
  readonly maxWasteRatio: number;
}

interface Slab {
  readonly buf: Buffer;
  /** Bytes handed out (the bump pointer). */
  used: number;
  /** Bytes of bodies still held. */
  live: number;
  /** Bytes left unused at the end when the slab stopped being the newest. */
  tail: number;
  readonly holders: Set<object>;
}

export interface ArenaStats {
  readonly slabs: number;
  /** Bytes allocated for slabs. */
  readonly slabBytes: number;
  /** Bytes of bodies held in slabs. */
  readonly liveBytes: number;
  /** Bytes of bodies too large for a slab, held in allocations of their own. */
  readonly ownBytes: number;
  /** Bytes of slabs once held by bodies no longer stored (what compaction removes). */
  readonly holeBytes: number;
  /** Bytes left at the ends of slabs where the next body did not fit. */
  readonly tailBytes: number;
  /** Slabs allocated since the start (compaction's cost shows here). */
  readonly slabsAllocated: number;
}

/** At most this many slabs compacted per placement: the cost of one store stays bounded. */
const MAX_COMPACTIONS_PER_PLACE = 4;

export class BodyArena<H extends object = BodyHolder> {
  /** Keyed by the slab's ArrayBuffer: a body view's `.buffer` names its slab. */
  private readonly slabs = new Map<ArrayBufferLike, Slab>();
  private current: Slab | undefined;
  private slabTotal = 0;
  private liveTotal = 0;
  private ownTotal = 0;
  private tailTotal = 0;
  private allocated = 0;
  private readonly own = new Set<H>();
  private readonly largest: number;
  private readonly access: BodyAccess<H>;

  constructor(
    private readonly opts: ArenaOptions,
    access?: BodyAccess<H>,
  ) {
    this.access = access ?? (BODY as unknown as BodyAccess<H>);
    if (!Number.isInteger(opts.slabBytes) || opts.slabBytes < 1024) throw new RangeError('slabBytes must be an integer >= 1024');
    if (!(opts.maxWasteRatio >= 0)) throw new RangeError('maxWasteRatio must be >= 0');
    this.largest = Math.floor(opts.slabBytes / 16);
  }

  /** Copies the holder's body into the arena and points the holder at the copy. Idempotent. */
  place(holder: H): void {
    if (this.holds(holder)) return;
    const bytes = this.access.get(holder);
    if (bytes.length > this.largest) {
      // Its own exact-size allocation. From 128 KiB up it is a mapping of its own (with
      // MALLOC_MMAP_THRESHOLD_=131072) and returns to the OS when freed; smaller ones (1/16
      // slab to 128 KiB) come from malloc's heap, where large chunks are reused whole.
      const copy = Buffer.allocUnsafeSlow(bytes.length);
      bytes.copy(copy);
      this.access.set(holder, copy);
      this.own.add(holder);
      this.ownTotal += bytes.length;
      return;
    }
    this.copyIn(holder, bytes);
    for (let i = 0; i < MAX_COMPACTIONS_PER_PLACE && this.tooWasteful(); i++) if (!this.compactMostHoled()) break;
  }

  /** The holder's body is no longer stored (evicted, purged, replaced). Its view stays readable. */
  release(holder: H): void {
    const bytes = this.access.get(holder);
    if (this.own.delete(holder)) {
      this.ownTotal -= bytes.length;
      return;
    }
    const slab = this.slabs.get(bytes.buffer);
    if (!slab?.holders.delete(holder)) return;
    slab.live -= bytes.length;
    this.liveTotal -= bytes.length;
    if (slab.live === 0 && slab !== this.current) this.drop(slab);
  }

  holds(holder: H): boolean {
    return this.own.has(holder) || this.slabs.get(this.access.get(holder).buffer)?.holders.has(holder) === true;
  }

  stats(): ArenaStats {
    return {
      slabs: this.slabs.size,
      slabBytes: this.slabTotal,
      liveBytes: this.liveTotal,
      ownBytes: this.ownTotal,
      holeBytes: this.holeTotal(),
      tailBytes: this.tailTotal,
      slabsAllocated: this.allocated,
    };
  }

  /** Slab bytes neither live, nor a tail, nor the newest slab's free space. */
  private holeTotal(): number {
    const fresh = this.current ? this.current.buf.length - this.current.used : 0;
    return this.slabTotal - this.liveTotal - this.tailTotal - fresh;
  }

  private holesOf(slab: Slab): number {
    return slab === this.current ? 0 : slab.buf.length - slab.live - slab.tail;
  }

  private copyIn(holder: H, bytes: Buffer): void {
    let slab = this.current;
    if (!slab || slab.used + bytes.length > slab.buf.length) slab = this.newSlab();
    const view = slab.buf.subarray(slab.used, slab.used + bytes.length);
    bytes.copy(view);
    slab.used += bytes.length;
    slab.live += bytes.length;
    slab.holders.add(holder);
    this.liveTotal += bytes.length;
    this.access.set(holder, view);
  }

  private newSlab(): Slab {
    const previous = this.current;
    if (previous) {
      previous.tail = previous.buf.length - previous.used;
      this.tailTotal += previous.tail;
    }
    const slab: Slab = { buf: Buffer.allocUnsafeSlow(this.opts.slabBytes), used: 0, live: 0, tail: 0, holders: new Set() };
    this.slabs.set(slab.buf.buffer, slab);
    this.slabTotal += slab.buf.length;
    this.allocated++;
    this.current = slab;
    // The slab it replaces may already be empty: nothing else would drop it.
    if (previous && previous.live === 0) this.drop(previous);
    return slab;
  }

  private drop(slab: Slab): void {
    this.slabs.delete(slab.buf.buffer);
    this.slabTotal -= slab.buf.length;
    this.tailTotal -= slab.tail;
    if (this.current === slab) this.current = undefined;
  }

  private tooWasteful(): boolean {
    return this.holeTotal() > this.liveTotal * this.opts.maxWasteRatio + 2 * this.opts.slabBytes;
  }

  /** Moves the live bodies of the slab with the most holes to the newest slab; false when none is worth it. */
  private compactMostHoled(): boolean {
    let victim: Slab | undefined;
    for (const slab of this.slabs.values()) if (!victim || this.holesOf(slab) > this.holesOf(victim)) victim = slab;
    // An eighth of a slab at least: every move frees that much for at most 7/8 of a slab copied.
    if (!victim || this.holesOf(victim) < this.opts.slabBytes / 8) return false;
    this.drop(victim);
    this.liveTotal -= victim.live;
    for (const holder of victim.holders as Set<H>) this.copyIn(holder, this.access.get(holder));
    return true;
  }
}
