/**
 * One tier's entries, held off the JS heap: a table of fixed-size records (one ArrayBuffer, 72
 * bytes per entry) for the LRU list, the key and URL hash chains, the lifetimes and the place of
 * the entry's bytes; the key itself, the body and the br form as one run of bytes in the tier's
 * slabs (slab-arena.ts); three references per entry (headers, modules, dependencies) in one JS
 * array, all of them shared between entries (compact.ts).
 *
 * Why (issue 21, docs/BENCHMARKS.md run N): an entry as JS objects cost ~800 bytes besides its
 * body (its key string ~123, the entry object ~150, lru-cache's slots 82, the URL index ~70, the
 * tag and slab sets ~50, and the heap around them), while a compressed answer of the test wiki
 * averages ~2 KB: the per-entry cost, not the body, bounded how many answers a budget held.
 *
 * Records are numbered from 1 (0 is "none", so a zeroed table needs no setup). The table is
 * allocated once, for as many records as the budget could ever hold, and its pages are touched
 * only as records are used (freed records are reused first, most recently freed first), so its
 * resident memory is what the most entries ever held at once needed: the tier charges that
 * (tableBytes).
 *
 * This module is the data structure only: what is stored, and when, is the tier's (tier.ts).
 */

/** Words (Int32) per record; 18 × 4 = 72 bytes, a multiple of 8 for the two Float64 fields. */
const WORDS = 18;
/** Least recently used neighbours: towards the head (most recent) and the tail. */
const PREV = 0;
const NEXT = 1;
/** The key's hash, and the next record of its key bucket. */
const HASH = 2;
const KEY_NEXT = 3;
/** The URL bucket's doubly linked chain (every variant of a URL hashes alike: chains can be long). */
const URL_PREV = 4;
const URL_NEXT = 5;
/** Where the record's bytes are: [key][URL key unless a prefix of the key][body][br]. */
const CHUNK = 6;
const OFFSET = 7;
const KEY_LEN = 8;
const URL_LEN = 9;
const BODY_LEN = 10;
const BR_LEN = 11;
const IDENTITY = 12;
/** status | flags << 16; 0 for a free record. */
const STATUS_FLAGS = 13;
/** Float64 fields, as indexes of an 8-byte slot in the record (9 per record). */
const TTL_F = 7;
const STORED_AT_F = 8;

const FLAG_GZIP = 1;
/** The URL key is stored after the key (not a prefix of it). */
const FLAG_URL_APART = 2;
/** Set in every record in use, whatever its status. */
const FLAG_USED = 4;
/** The answer carries the wiki's clock (entry.ts `clock`). */
const FLAG_CLOCK = 8;

/** Bytes a record costs in the table. */
export const RECORD_BYTES = WORDS * 4;

/**
 * Keys of one hash bucket at most: a flood of keys made to collide (the hash is seeded per
 * process, but cheap hashes have seed-independent collisions) cannot make lookups walk long
 * chains; a key whose bucket is full is not stored (tier.ts). With a load of at most one key per
 * bucket, 16 in one bucket by chance has a probability of ~1e-14.
 */
export const MAX_KEY_CHAIN = 16;

/** Per process: bucket positions cannot be computed from outside. */
const SEED = (Math.random() * 0x7fffffff) | 0;

function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** FNV-1a over the characters (Latin-1: the same as over the stored bytes), seeded, mixed. */
export function hashChars(s: string): number {
  let h = SEED ^ 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return mix(h);
}

function hashBytes(buf: Buffer, at: number, length: number): number {
  let h = SEED ^ 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ buf[at + i]!, 0x01000193);
  return mix(h);
}

/** Whether every character of `s` fits a byte (keys and URL keys are percent-encoded: they do). */
export function isLatin1(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) return false;
  return true;
}

export interface RecordFields {
  readonly status: number;
  readonly gzip: boolean;
  readonly clock: boolean;
  readonly identityBytes: number;
  readonly storedAt: number;
  readonly ttlMs: number;
}

/** Where a record's bytes lie, given to the tier's arena (tier.ts). */
export interface BytesSource {
  buffer(chunk: number): Buffer;
}

export class EntryTable {
  readonly capacity: number;
  private words: Int32Array;
  private floats: Float64Array;
  /** headers, modules, deps of record r at 3r, 3r+1, 3r+2. */
  refs: unknown[] = [];
  private keyBuckets: Int32Array;
  private urlBuckets: Int32Array;
  private head = 0;
  private tail = 0;
  private freeList = 0;
  count = 0;
  /** Records ever used: the table's touched pages. */
  highWater = 0;

  /**
   * `hashKey`: the keys' hash, hashChars unless a test needs collisions on demand (the URL
   * buckets always use hashChars: they are rebuilt from the stored bytes).
   */
  constructor(
    capacity: number,
    private readonly bytes: BytesSource,
    readonly hashKey: (key: string) => number = hashChars,
  ) {
    this.capacity = Math.max(0, Math.floor(capacity));
    const buffer = new ArrayBuffer((this.capacity + 1) * RECORD_BYTES);
    this.words = new Int32Array(buffer);
    this.floats = new Float64Array(buffer);
    this.keyBuckets = new Int32Array(16);
    this.urlBuckets = new Int32Array(16);
  }

  /** Bytes of the two bucket arrays. */
  get bucketBytes(): number {
    return (this.keyBuckets.length + this.urlBuckets.length) * 4;
  }

  get oldest(): number {
    return this.tail;
  }

  /** Towards the newest: the next record after `r` from the tail. */
  newerThan(r: number): number {
    return this.words[r * WORDS + PREV]!;
  }

  inUse(r: number): boolean {
    return this.words[r * WORDS + STATUS_FLAGS] !== 0;
  }

  // --- lookup -----------------------------------------------------------------------------

  /** The record stored under `key`, or 0. */
  find(key: string, hash = this.hashKey(key)): number {
    const w = this.words;
    for (let r = this.keyBuckets[hash & (this.keyBuckets.length - 1)]!; r !== 0; r = w[r * WORDS + KEY_NEXT]!) {
      if (w[r * WORDS + HASH] === hash && this.keyIs(r, key)) return r;
    }
    return 0;
  }

  /** Keys in `key`'s bucket. */
  chainLength(hash: number): number {
    let n = 0;
    for (let r = this.keyBuckets[hash & (this.keyBuckets.length - 1)]!; r !== 0; r = this.words[r * WORDS + KEY_NEXT]!) n++;
    return n;
  }

  /** Every record whose URL key is `urlKey`. */
  withUrl(urlKey: string): number[] {
    const out: number[] = [];
    const w = this.words;
    const hash = hashChars(urlKey);
    for (let r = this.urlBuckets[hash & (this.urlBuckets.length - 1)]!; r !== 0; r = w[r * WORDS + URL_NEXT]!) {
      if (this.urlIs(r, urlKey)) out.push(r);
    }
    return out;
  }

  private keyIs(r: number, key: string): boolean {
    const w = this.words;
    const base = r * WORDS;
    if (w[base + KEY_LEN] !== key.length) return false;
    const buf = this.bytes.buffer(w[base + CHUNK]!);
    const at = w[base + OFFSET]!;
    for (let i = 0; i < key.length; i++) if (buf[at + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private urlIs(r: number, urlKey: string): boolean {
    const w = this.words;
    if (w[r * WORDS + URL_LEN] !== urlKey.length) return false;
    const buf = this.bytes.buffer(w[r * WORDS + CHUNK]!);
    const at = this.urlAt(r);
    for (let i = 0; i < urlKey.length; i++) if (buf[at + i] !== urlKey.charCodeAt(i)) return false;
    return true;
  }

  // --- records ----------------------------------------------------------------------------

  /** A free record (0 when the table is full); not yet linked anywhere. */
  allocate(): number {
    if (this.freeList !== 0) {
      const r = this.freeList;
      this.freeList = this.words[r * WORDS + NEXT]!;
      return r;
    }
    if (this.highWater >= this.capacity) return 0;
    return ++this.highWater;
  }

  /**
   * Fill record `r` (from allocate()) and link it: newest in the LRU, in its key's and its URL's
   * buckets. Its bytes are already written at `chunk`/`offset` ([key][URL apart][body][br]).
   */
  insert(
    r: number,
    keyHash: number,
    urlKey: string,
    place: { chunk: number; offset: number; keyLen: number; urlLen: number; urlApart: boolean; bodyLen: number; brLen: number },
    f: RecordFields,
  ): void {
    const w = this.words;
    const base = r * WORDS;
    w[base + HASH] = keyHash;
    w[base + CHUNK] = place.chunk;
    w[base + OFFSET] = place.offset;
    w[base + KEY_LEN] = place.keyLen;
    w[base + URL_LEN] = place.urlLen;
    w[base + BODY_LEN] = place.bodyLen;
    w[base + BR_LEN] = place.brLen;
    w[base + IDENTITY] = f.identityBytes;
    w[base + STATUS_FLAGS] =
      (f.status & 0xffff) | ((FLAG_USED | (f.gzip ? FLAG_GZIP : 0) | (f.clock ? FLAG_CLOCK : 0) | (place.urlApart ? FLAG_URL_APART : 0)) << 16);
    this.floats[r * (WORDS / 2) + TTL_F] = f.ttlMs;
    this.floats[r * (WORDS / 2) + STORED_AT_F] = f.storedAt;
    this.count++;
    this.linkNewest(r);
    const kb = keyHash & (this.keyBuckets.length - 1);
    w[base + KEY_NEXT] = this.keyBuckets[kb]!;
    this.keyBuckets[kb] = r;
    this.linkUrl(r, hashChars(urlKey));
    if (this.count > this.keyBuckets.length) this.grow();
  }

  /** Unlink record `r` from everything and free it. */
  remove(r: number): void {
    const w = this.words;
    const base = r * WORDS;
    this.unlinkLru(r);
    // Key chain: singly linked, at most MAX_KEY_CHAIN long.
    const kb = w[base + HASH]! & (this.keyBuckets.length - 1);
    if (this.keyBuckets[kb] === r) this.keyBuckets[kb] = w[base + KEY_NEXT]!;
    else {
      let p = this.keyBuckets[kb]!;
      while (p !== 0 && w[p * WORDS + KEY_NEXT] !== r) p = w[p * WORDS + KEY_NEXT]!;
      if (p !== 0) w[p * WORDS + KEY_NEXT] = w[base + KEY_NEXT]!;
    }
    this.unlinkUrl(r);
    w.fill(0, base, base + WORDS);
    this.refs[3 * r] = this.refs[3 * r + 1] = this.refs[3 * r + 2] = undefined;
    w[base + NEXT] = this.freeList;
    this.freeList = r;
    this.count--;
  }

  /** Make `r` the most recently used. */
  touch(r: number): void {
    if (this.head === r) return;
    this.unlinkLru(r);
    this.linkNewest(r);
  }

  /** Bytes moved (compaction): the record's bytes are now at `chunk`/`offset`. */
  moved(r: number, chunk: number, offset: number): void {
    this.words[r * WORDS + CHUNK] = chunk;
    this.words[r * WORDS + OFFSET] = offset;
  }

  // --- fields -----------------------------------------------------------------------------

  chunk(r: number): number {
    return this.words[r * WORDS + CHUNK]!;
  }

  offset(r: number): number {
    return this.words[r * WORDS + OFFSET]!;
  }

  /** All of the record's bytes: key, URL key apart, body, br. */
  regionLength(r: number): number {
    return this.bodyAt(r) - this.offset(r) + this.bodyLength(r) + this.brLength(r);
  }

  keyLength(r: number): number {
    return this.words[r * WORDS + KEY_LEN]!;
  }

  urlAt(r: number): number {
    return this.offset(r) + (this.urlApart(r) ? this.keyLength(r) : 0);
  }

  urlLength(r: number): number {
    return this.words[r * WORDS + URL_LEN]!;
  }

  /** Where the body begins in the record's bytes (after the key and the URL key apart). */
  bodyAt(r: number): number {
    const base = r * WORDS;
    return this.words[base + OFFSET]! + this.words[base + KEY_LEN]! + (this.urlApart(r) ? this.words[base + URL_LEN]! : 0);
  }

  private urlApart(r: number): boolean {
    return ((this.words[r * WORDS + STATUS_FLAGS]! >>> 16) & FLAG_URL_APART) !== 0;
  }

  bodyLength(r: number): number {
    return this.words[r * WORDS + BODY_LEN]!;
  }

  brLength(r: number): number {
    return this.words[r * WORDS + BR_LEN]!;
  }

  status(r: number): number {
    return this.words[r * WORDS + STATUS_FLAGS]! & 0xffff;
  }

  gzip(r: number): boolean {
    return ((this.words[r * WORDS + STATUS_FLAGS]! >>> 16) & FLAG_GZIP) !== 0;
  }

  clock(r: number): boolean {
    return ((this.words[r * WORDS + STATUS_FLAGS]! >>> 16) & FLAG_CLOCK) !== 0;
  }

  identityBytes(r: number): number {
    return this.words[r * WORDS + IDENTITY]!;
  }

  storedAt(r: number): number {
    return this.floats[r * (WORDS / 2) + STORED_AT_F]!;
  }

  ttlMs(r: number): number {
    return this.floats[r * (WORDS / 2) + TTL_F]!;
  }

  // --- links ------------------------------------------------------------------------------

  private linkNewest(r: number): void {
    const w = this.words;
    w[r * WORDS + PREV] = 0;
    w[r * WORDS + NEXT] = this.head;
    if (this.head !== 0) w[this.head * WORDS + PREV] = r;
    this.head = r;
    if (this.tail === 0) this.tail = r;
  }

  private unlinkLru(r: number): void {
    const w = this.words;
    const prev = w[r * WORDS + PREV]!;
    const next = w[r * WORDS + NEXT]!;
    if (prev !== 0) w[prev * WORDS + NEXT] = next;
    else this.head = next;
    if (next !== 0) w[next * WORDS + PREV] = prev;
    else this.tail = prev;
    w[r * WORDS + PREV] = w[r * WORDS + NEXT] = 0;
  }

  private linkUrl(r: number, urlHash: number): void {
    const w = this.words;
    const ub = urlHash & (this.urlBuckets.length - 1);
    const first = this.urlBuckets[ub]!;
    w[r * WORDS + URL_PREV] = 0;
    w[r * WORDS + URL_NEXT] = first;
    if (first !== 0) w[first * WORDS + URL_PREV] = r;
    this.urlBuckets[ub] = r;
  }

  private unlinkUrl(r: number): void {
    const w = this.words;
    const prev = w[r * WORDS + URL_PREV]!;
    const next = w[r * WORDS + URL_NEXT]!;
    if (prev !== 0) w[prev * WORDS + URL_NEXT] = next;
    else {
      // The first of its bucket: find the bucket from its URL's bytes.
      const buf = this.bytes.buffer(this.chunk(r));
      const ub = hashBytes(buf, this.urlAt(r), this.urlLength(r)) & (this.urlBuckets.length - 1);
      if (this.urlBuckets[ub] === r) this.urlBuckets[ub] = next;
    }
    if (next !== 0) w[next * WORDS + URL_PREV] = prev;
  }

  /**
   * Renumber the records in use 1..count, least recently used first, into a new table: the pages
   * of the records freed since the most were held go with the old one (the tier charges them
   * until then, tier.ts tableBytes). Returns the new number of every old one (0: not in use).
   */
  repack(): Int32Array {
    const renumbered = new Int32Array(this.highWater + 1);
    const buffer = new ArrayBuffer((this.capacity + 1) * RECORD_BYTES);
    const words = new Int32Array(buffer);
    const refs: unknown[] = [undefined, undefined, undefined];
    let n = 0;
    for (let r = this.tail; r !== 0; r = this.words[r * WORDS + PREV]!) {
      n++;
      renumbered[r] = n;
      words.set(this.words.subarray(r * WORDS, (r + 1) * WORDS), n * WORDS);
      refs.push(this.refs[3 * r], this.refs[3 * r + 1], this.refs[3 * r + 2]);
    }
    // Oldest first: record i's newer neighbour is i + 1, its older one i - 1.
    for (let i = 1; i <= n; i++) {
      words[i * WORDS + PREV] = i < n ? i + 1 : 0;
      words[i * WORDS + NEXT] = i - 1;
    }
    this.words = words;
    this.floats = new Float64Array(buffer);
    this.refs = refs;
    this.head = n;
    this.tail = n > 0 ? 1 : 0;
    this.freeList = 0;
    this.highWater = n;
    // Buckets for what is held now (at least one per record), not for what the flood held.
    let size = 16;
    while (size < n) size *= 2;
    this.rebuildBuckets(size);
    return renumbered;
  }

  /** Twice the buckets (a load of at most one key per bucket): chains rebuilt from the records. */
  private grow(): void {
    this.rebuildBuckets(this.keyBuckets.length * 2);
  }

  private rebuildBuckets(size: number): void {
    this.keyBuckets = new Int32Array(size);
    this.urlBuckets = new Int32Array(size);
    const w = this.words;
    for (let r = this.tail; r !== 0; r = w[r * WORDS + PREV]!) {
      const kb = w[r * WORDS + HASH]! & (size - 1);
      w[r * WORDS + KEY_NEXT] = this.keyBuckets[kb]!;
      this.keyBuckets[kb] = r;
      this.linkUrl(r, hashBytes(this.bytes.buffer(this.chunk(r)), this.urlAt(r), this.urlLength(r)));
    }
  }
}
