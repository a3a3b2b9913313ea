/**
 * One in-process tier (shared, or per-session): a byte budget over an entry table (entry-table.ts,
 * records off the JS heap) and a slab arena (slab-arena.ts, every entry's key and bytes), with
 * the indexes purges need (URL: in the table; dependency tags and session slots: maps of record
 * numbers) and the charge of everything an entry holds.
 *
 * Semantics kept from the lru-cache tier it replaces (lru-cache's set() and get()): an entry larger than the
 * budget stores nothing and drops what its key held; the least recently used entry goes first;
 * no lifetimes here (freshness.ts decides from storedAt/ttlMs, and the lookup that finds an entry
 * dead deletes it).
 */
import type { EvictionReason, Tier } from '../words/outcomes.js';
import { compactModules, sharedHeaders } from './compact.js';
import { type CacheEntry, entryFields } from './entry.js';
import { EntryTable, MAX_KEY_CHAIN, RECORD_BYTES, isLatin1 } from './entry-table.js';
import { SlabArena } from './slab-arena.js';

/**
 * What a stored entry is read as: made from its record when it is first read (get), kept while
 * it is stored so that it is the same object at every read (the hit path keeps per-entry memos
 * by identity: fresh-hit.ts, deliver.ts, representations.ts), charged while it is kept. Its body
 * (and br) are views of its bytes in the arena, made at every read (~30-40 ns): the arena may
 * move them, and any view read stays valid. Never spread one ({...entry} has no body).
 */
export class StoredEntry implements CacheEntry {
  #bytes: ArrayBufferLike;
  #offset: number;
  #length: number;
  /** Where the br form begins in the region (the body's length); the region's length without one. */
  readonly #split: number;

  constructor(
    readonly status: number,
    readonly headers: Readonly<Record<string, string | string[]>>,
    readonly storedAt: number,
    readonly ttlMs: number,
    readonly urlKey: string,
    readonly modules: readonly string[],
    readonly slot: string | undefined,
    readonly deps: readonly string[],
    readonly coding: 'gzip' | undefined,
    readonly identityBytes: number | undefined,
    region: Buffer,
    split: number,
    readonly clock: true | undefined,
  ) {
    this.#bytes = region.buffer;
    this.#offset = region.byteOffset;
    this.#length = region.length;
    this.#split = split;
  }

  get body(): Buffer {
    return Buffer.from(this.#bytes, this.#offset, this.#split);
  }

  get br(): Buffer | undefined {
    return this.#split === this.#length ? undefined : Buffer.from(this.#bytes, this.#offset + this.#split, this.#length - this.#split);
  }

  /** The arena moved the entry's bytes: body and br are read from `view` from now on. */
  set region(view: Buffer) {
    this.#bytes = view.buffer;
    this.#offset = view.byteOffset;
    this.#length = view.length;
  }
}

/**
 * What a record costs besides its bytes and its tags: its 72 bytes in the table, and 64 of JS
 * heap: its three references in the refs array (24) with that array's growth (by half again
 * when full), and what the heap keeps around them. Set from bench/memory.mjs (docs/BENCHMARKS.md
 * run O): a 256 MB store fed 2.4x what it holds of ~1 KiB answers grew the process by 189 bytes per
 * entry besides its bytes in the slabs (84 of them heap, one tag each), against 147 charged with
 * 32 here.
 */
export const SLOT_BYTES = RECORD_BYTES + 64;

/** A tag index slot: a Set member (or a Map entry for the first record of a tag), a small integer. */
const TAG_INDEX_BYTES = 40;

/** A session entry's slot: its place in the record → slot map and in the slot's set of records. */
const SESSION_SLOT_BYTES = 96;

/**
 * A view kept for an entry that has been read (StoredEntry: the object, its URL key string, its
 * place in the map of views and in the map of read keys), charged while kept with its key's
 * length (the read keys' map holds the key as a string).
 */
const VIEW_BYTES = 320;

/** A header set's own memory besides its strings (compact.ts: frozen object, property store, count of users). */
const HEADER_SET_BYTES = 384;

/** Bytes an entry's own bytes take in the arena: key, URL key unless a prefix of the key, body, br. */
function regionLength(key: string, entry: CacheEntry): number {
  return key.length + (key.startsWith(entry.urlKey) ? 0 : entry.urlKey.length) + entry.body.length + (entry.coding ? (entry.br?.length ?? 0) : 0);
}

function indexCharge(deps: readonly string[], slot: string | undefined): number {
  let size = 0;
  for (const tag of deps) size += TAG_INDEX_BYTES + tag.length;
  if (slot !== undefined) size += SESSION_SLOT_BYTES + slot.length;
  return size;
}

/** What a tier charges for one entry, its header set aside (headerSetSize) and its view aside. */
export function entrySize(key: string, entry: CacheEntry): number {
  return SLOT_BYTES + regionLength(key, entry) + indexCharge(entry.deps, entry.slot);
}

/**
 * What a header set costs a tier, charged while at least one entry of the tier holds it: one
 * byte per character of its names and values (Latin-1), interned ones too (the bounded intern
 * table is not charged otherwise).
 */
export function headerSetSize(headers: Readonly<Record<string, string | string[]>>): number {
  let size = HEADER_SET_BYTES;
  for (const name in headers) {
    const v = headers[name]!;
    size += name.length + (Array.isArray(v) ? v.join('').length : v.length);
  }
  return size;
}

export interface TierOptions {
  readonly maxEntries: number;
  /** Tests only: the keys' hash (entry-table.ts), to make colliding keys on demand. */
  readonly hashKey?: (key: string) => number;
  readonly onEvict?: (tier: Tier, reason: EvictionReason, count: number) => void;
}

/**
 * Slabs of 1/64 of the tier's budget, within 128 KiB-1 MiB: two slabs of slack are 3.1 % of
 * budgets from 8 MiB up (more of the smaller ones). 128 KiB at least, so that with
 * MALLOC_MMAP_THRESHOLD_=131072 (cluster/worker-env.ts) every slab is a mapping of its own.
 */
function slabBytesFor(maxBytes: number): number {
  return Math.min(1024 * 1024, Math.max(128 * 1024, Math.floor(maxBytes / 64)));
}

type RecordIndex = Map<string, number | Set<number>>;

function addTo(map: RecordIndex, id: string, r: number): void {
  const current = map.get(id);
  if (current === undefined || current === r) map.set(id, r);
  else if (typeof current === 'number') map.set(id, new Set([current, r]));
  else current.add(r);
}

function removeFrom(map: RecordIndex, id: string, r: number): void {
  const current = map.get(id);
  if (current === undefined) return;
  if (typeof current === 'number') {
    if (current === r) map.delete(id);
    return;
  }
  current.delete(r);
  if (current.size === 1) map.set(id, current.values().next().value as number);
  else if (current.size === 0) map.delete(id);
}

export class Tiered {
  readonly maxBytes: number;
  private readonly table: EntryTable;
  private readonly arena: SlabArena;
  /** Dependency tag → records that depend on it (invalidation). */
  private readonly byTag: RecordIndex = new Map();
  /** Session slot → its records (logout), and record → slot. */
  private readonly bySlot: RecordIndex = new Map();
  private readonly slotOf = new Map<number, string>();
  /** Views of entries that have been read, kept and charged while the entry is stored. */
  private readonly views = new Map<number, StoredEntry>();
  /**
   * Keys of the entries read → their records: a hit finds its entry by a Map lookup of its key,
   * whose hash V8 keeps in the string (the hit path's key string is memoised per request shape,
   * fresh-hit.ts), instead of hashing and comparing ~100 characters (~0.4 µs).
   */
  private readonly readKeys = new Map<string, number>();
  private viewCharge = 0;
  /** Bytes of keys (and URL keys stored apart) in the arena: its live bytes less these are bodies. */
  private keyBytes = 0;
  /** Entries' charges (entrySize). */
  private charged = 0;
  /**
   * Entries of this tier holding each header set. Equal header sets are one frozen object
   * (compact.ts sharedHeaders): a set costs its entries one pointer each, so its bytes are
   * charged once, while any entry holds it (headerBytes), not once per entry.
   */
  private readonly headerUsers = new Map<object, number>();
  headerBytes = 0;
  /** The answers' own bytes of the entries held (the stored bytes, decoded): the compression ratio. */
  identityBytes = 0;
  /** Set while an entry is replaced by itself with a br form added (not an eviction). */
  private upgrading = false;

  constructor(
    readonly tier: Tier,
    maxBytes: number,
    private readonly opts: TierOptions,
  ) {
    this.maxBytes = maxBytes;
    this.arena = new SlabArena({ slabBytes: slabBytesFor(maxBytes), maxWasteRatio: 0.1 }, (chunk) => this.relocate(chunk));
    // No entry costs less than SLOT_BYTES: the table never needs more records than that many.
    this.table = new EntryTable(Math.min(opts.maxEntries, Math.floor(maxBytes / SLOT_BYTES)), this.arena, opts.hashKey);
  }

  get entries(): number {
    return this.table.count;
  }

  /**
   * The table's memory besides its records in use: the buckets, and records once used and now
   * free (their pages stay touched, and are reused first).
   */
  get tableBytes(): number {
    return this.table.bucketBytes + (this.table.highWater - this.table.count) * SLOT_BYTES;
  }

  /** What the views kept for entries that have been read cost (VIEW_BYTES and the key's length each). */
  get viewBytes(): number {
    return this.viewCharge;
  }

  /** Everything charged to the budget. */
  get bytes(): number {
    return this.charged + this.viewCharge + this.headerBytes + this.tableBytes;
  }

  get bodyBytes(): number {
    const s = this.arena.stats();
    return s.liveBytes + s.ownBytes - this.keyBytes;
  }

  arenaStats(): ReturnType<SlabArena['stats']> {
    return this.arena.stats();
  }

  /** The entry under `key`, made the most recently used. */
  get(key: string): StoredEntry | undefined {
    const read = this.readKeys.get(key);
    if (read !== undefined) {
      this.table.touch(read);
      return this.views.get(read)!;
    }
    const r = this.table.find(key);
    if (r === 0) return undefined;
    this.table.touch(r);
    return this.keepView(r, key);
  }

  /** The entry under `key`, its recency untouched; not kept as a view unless it was. */
  peek(key: string): StoredEntry | undefined {
    const r = this.table.find(key);
    return r === 0 ? undefined : (this.views.get(r) ?? this.viewOf(r));
  }

  has(key: string): boolean {
    return this.table.find(key) !== 0;
  }

  /**
   * `now`: a writer whose clock is ahead of ours (an entry from another replica) has its entry
   * counted from now, so that it is never fresh or kept here longer than its whole window (as
   * Redis' PX, freshness.ts remainingKeepMs, bounds it there).
   */
  set(key: string, given: CacheEntry, now: number): boolean {
    const storedAt = Math.min(given.storedAt, now);
    const hash = this.table.hashKey(key);
    const existing = this.table.find(key, hash);
    // Keys are stored as bytes (entry-table.ts); the gateway's keys are percent-encoded URLs and
    // never hold more. A key is never empty either: its bytes make every region at least one
    // byte long, and the arena drops a slab whose live bytes reach 0. Not stored, and, as for an
    // oversize entry, what the key held goes.
    if (key.length === 0 || !isLatin1(key) || !isLatin1(given.urlKey)) {
      if (existing !== 0) this.remove(existing, 'replaced');
      return false;
    }
    const headers = sharedHeaders(given.headers);
    const modules = compactModules(given.modules);
    // Tag lists repeat as module lists do (the same query shapes): shared the same way.
    const deps = compactModules(given.deps);
    const size = entrySize(key, given);
    // Its header set is charged with it unless another entry of the tier holds it already (the
    // entry it replaces does not count: it goes). It must fit the budget alone with its set:
    // evicting the others may take the set's last other holder.
    const alone = size + headerSetSize(headers) + this.table.bucketBytes;
    if (alone > this.maxBytes || this.table.capacity === 0) {
      // As lru-cache did with an oversize entry: nothing stored, and what the key held goes.
      if (existing !== 0) this.remove(existing, 'replaced');
      return false;
    }
    if (existing !== 0) this.remove(existing, 'replaced');
    // A bucket made full by colliding keys: not stored (entry-table.ts MAX_KEY_CHAIN).
    else if (this.table.chainLength(hash) >= MAX_KEY_CHAIN) return false;
    let r = this.table.allocate();
    while (r === 0 && this.table.count > 0) {
      this.remove(this.table.oldest, 'size');
      r = this.table.allocate();
    }
    if (r === 0) return false;
    const gzip = given.coding === 'gzip';
    const br = gzip ? given.br : undefined;
    const urlApart = !key.startsWith(given.urlKey);
    const length = regionLength(key, given);
    const chunk = this.arena.alloc(length);
    const offset = this.arena.offset;
    const buf = this.arena.buffer(chunk);
    let at = offset + buf.write(key, offset, 'latin1');
    if (urlApart) at += buf.write(given.urlKey, at, 'latin1');
    at += given.body.copy(buf, at);
    if (br) br.copy(buf, at);
    this.table.refs[3 * r] = headers;
    this.table.refs[3 * r + 1] = modules;
    this.table.refs[3 * r + 2] = deps;
    this.table.insert(
      r,
      hash,
      given.urlKey,
      { chunk, offset, keyLen: key.length, urlLen: given.urlKey.length, urlApart, bodyLen: given.body.length, brLen: br?.length ?? 0 },
      { status: given.status, gzip, clock: given.clock === true, identityBytes: gzip ? (given.identityBytes ?? 0) : 0, storedAt, ttlMs: given.ttlMs },
    );
    for (const tag of deps) addTo(this.byTag, tag, r);
    if (given.slot !== undefined) {
      this.slotOf.set(r, given.slot);
      addTo(this.bySlot, given.slot, r);
    }
    this.holdHeaders(headers);
    this.charged += size;
    this.keyBytes += key.length + (urlApart ? given.urlKey.length : 0);
    this.identityBytes += gzip ? (given.identityBytes ?? 0) : given.body.length;
    // The least recently used go first until the count and the budget hold (never this one: with
    // its set it fits alone, once the records the others leave free are given back).
    while (this.table.count > this.opts.maxEntries || this.bytes > this.maxBytes) {
      const oldest = this.table.oldest;
      if (oldest !== r && oldest !== 0) this.remove(oldest, 'size');
      else if (this.table.highWater > this.table.count) r = this.repack()[r]!;
      else break;
    }
    if (this.table.count > this.opts.maxEntries || this.bytes > this.maxBytes) {
      this.remove(r, 'size');
      this.repackWhenSparse();
      return false;
    }
    this.arena.compact();
    this.repackWhenSparse();
    return true;
  }

  /**
   * The entry under `key`, still `current`, again with its br form (representations.ts): false
   * when the key holds another entry by now (replaced, purged, evicted) or the larger entry no
   * longer fits. It becomes the most recently used; it is not counted as an eviction.
   */
  addBrotli(key: string, current: CacheEntry, br: Buffer, now: number): boolean {
    if (!current.coding) return false;
    return this.replaceForm(
      key,
      current,
      { ...entryFields(current), body: current.body, coding: current.coding, identityBytes: current.identityBytes, br },
      now,
    );
  }

  /**
   * Replace the identity entry `current` under `key` by its gzip form with `headers`
   * (representations.ts gzipFirst: made when a client first takes it): false when the key holds another entry by
   * now, the entry is stored compressed already, or the new one no longer fits. As addBrotli, it
   * becomes the most recently used and is not counted as an eviction.
   */
  addGzip(key: string, current: CacheEntry, gzip: Buffer, headers: CacheEntry['headers'], now: number): boolean {
    if (current.coding) return false;
    return this.replaceForm(key, current, { ...entryFields(current), headers, body: gzip, coding: 'gzip', identityBytes: current.body.length }, now);
  }

  private replaceForm(key: string, current: CacheEntry, next: CacheEntry, now: number): boolean {
    const r = this.table.find(key);
    if (r === 0 || !this.isEntryOf(r, current)) return false;
    this.upgrading = true;
    try {
      return this.set(key, next, now);
    } finally {
      this.upgrading = false;
    }
  }

  /**
   * Whether `entry` was read from record `r` as it is now: its kept view, or (when none could be
   * kept, for an entry near the whole budget) a view whose body is this record's bytes where
   * they lie now (the memory of a slab a view was made of is never reused, slab-arena.ts: no other entry's view can point there).
   */
  private isEntryOf(r: number, entry: CacheEntry): boolean {
    const kept = this.views.get(r);
    if (kept !== undefined) return kept === entry;
    const t = this.table;
    const slab = this.arena.buffer(t.chunk(r));
    const body = entry.body;
    return body.buffer === slab.buffer && body.byteOffset === slab.byteOffset + t.bodyAt(r) && body.length === t.bodyLength(r);
  }

  /** Remove the entries under `keys`; how many there were. */
  deleteKeys(keys: Iterable<string>, reason: EvictionReason): number {
    const records: number[] = [];
    for (const key of keys) {
      const r = this.table.find(key);
      if (r !== 0) records.push(r);
    }
    return this.deleteRecords(records, reason);
  }

  /** Remove every entry named (records found by the finders below); how many. */
  deleteRecords(records: Iterable<number>, reason: EvictionReason): number {
    let n = 0;
    for (const r of new Set(records)) {
      if (!this.table.inUse(r)) continue;
      this.remove(r, reason);
      n++;
    }
    this.repackWhenSparse();
    return n;
  }

  /**
   * Records freed and not reused (a purge, or large entries evicting many small ones) keep their
   * pages and are charged (tableBytes): once they are more than a quarter of those in use, and
   * worth 1/64 of the budget, the table is renumbered into a new one (entry-table.ts repack), so
   * that a flood of small entries does not shrink the budget for good. Each repack costs O(count)
   * and follows count/4 removals at least.
   */
  private repackWhenSparse(): void {
    const t = this.table;
    const free = t.highWater - t.count;
    if (free > t.count / 4 && free * SLOT_BYTES > this.maxBytes / 64) this.repack();
  }

  /** Renumber the table (entry-table.ts repack) and every index of record numbers with it. */
  private repack(): Int32Array {
    const renumbered = this.table.repack();
    const remap = (index: RecordIndex) => {
      for (const [id, v] of index) index.set(id, typeof v === 'number' ? renumbered[v]! : new Set([...v].map((r) => renumbered[r]!)));
    };
    remap(this.byTag);
    remap(this.bySlot);
    const slots = [...this.slotOf];
    this.slotOf.clear();
    for (const [r, slot] of slots) this.slotOf.set(renumbered[r]!, slot);
    const views = [...this.views];
    this.views.clear();
    for (const [r, view] of views) this.views.set(renumbered[r]!, view);
    for (const [key, r] of this.readKeys) this.readKeys.set(key, renumbered[r]!);
    return renumbered;
  }

  withUrl(urlKey: string): number[] {
    return this.table.withUrl(urlKey);
  }

  withTag(tag: string): number[] {
    const v = this.byTag.get(tag);
    return v === undefined ? [] : typeof v === 'number' ? [v] : [...v];
  }

  /** The modules of each distinct record (a record named by several tags counts once). */
  modulesOfRecords(records: readonly number[]): (readonly string[])[] {
    return [...new Set(records)].map((r) => this.table.refs[3 * r + 1] as readonly string[]);
  }

  withSlot(slot: string): number[] {
    const v = this.bySlot.get(slot);
    return v === undefined ? [] : typeof v === 'number' ? [v] : [...v];
  }

  /** Every record, least recently used first. */
  all(): number[] {
    const out: number[] = [];
    for (let r = this.table.oldest; r !== 0; r = this.table.newerThan(r)) out.push(r);
    return out;
  }

  /** The key of record `r`. */
  keyOf(r: number): string {
    const at = this.table.offset(r);
    return this.arena.buffer(this.table.chunk(r)).toString('latin1', at, at + this.table.keyLength(r));
  }

  /** Record `r` as an entry (its kept view, or a new one not kept). */
  entryOf(r: number): StoredEntry {
    return this.views.get(r) ?? this.viewOf(r);
  }

  private viewOf(r: number): StoredEntry {
    const t = this.table;
    const chunk = t.chunk(r);
    const urlAt = t.urlAt(r);
    const bodyLen = t.bodyLength(r);
    const gzip = t.gzip(r);
    return new StoredEntry(
      t.status(r),
      t.refs[3 * r] as CacheEntry['headers'],
      t.storedAt(r),
      t.ttlMs(r),
      this.arena.buffer(chunk).toString('latin1', urlAt, urlAt + t.urlLength(r)),
      t.refs[3 * r + 1] as readonly string[],
      this.slotOf.get(r),
      t.refs[3 * r + 2] as readonly string[],
      gzip ? 'gzip' : undefined,
      gzip ? t.identityBytes(r) : undefined,
      this.arena.view(chunk, t.bodyAt(r), bodyLen + t.brLength(r)),
      bodyLen,
      t.clock(r) || undefined,
    );
  }

  /** A view made and kept for `r` (the most recently used), charged; not kept if it cannot fit. */
  private keepView(r: number, key: string): StoredEntry {
    const view = this.viewOf(r);
    const charge = VIEW_BYTES + key.length;
    this.views.set(r, view);
    this.readKeys.set(key, r);
    this.viewCharge += charge;
    while (this.bytes > this.maxBytes) {
      const oldest = this.table.oldest;
      if (oldest === r || oldest === 0) break;
      this.remove(oldest, 'size');
    }
    if (this.bytes > this.maxBytes) this.forgetView(r);
    return view;
  }

  /** Drop the view kept for `r`, if any, and its read key. */
  private forgetView(r: number): void {
    if (!this.views.delete(r)) return;
    const length = this.table.keyLength(r);
    this.readKeys.delete(this.keyOf(r));
    this.viewCharge -= VIEW_BYTES + length;
  }

  private remove(r: number, reason: EvictionReason): void {
    const t = this.table;
    const headers = t.refs[3 * r] as object;
    const deps = t.refs[3 * r + 2] as readonly string[];
    const slot = this.slotOf.get(r);
    const length = t.regionLength(r);
    this.forgetView(r);
    this.charged -= SLOT_BYTES + length + indexCharge(deps, slot);
    this.identityBytes -= t.gzip(r) ? t.identityBytes(r) : t.bodyLength(r);
    this.keyBytes -= t.bodyAt(r) - t.offset(r);
    for (const tag of deps) removeFrom(this.byTag, tag, r);
    if (slot !== undefined) {
      this.slotOf.delete(r);
      removeFrom(this.bySlot, slot, r);
    }
    this.releaseHeaders(headers);
    // The table reads the URL key from the bytes to unlink it: released after.
    const chunk = t.chunk(r);
    t.remove(r);
    this.arena.release(chunk, length);
    if (!this.upgrading) this.opts.onEvict?.(this.tier, reason, 1);
  }

  /** Compaction (slab-arena.ts): every record in `chunk` moves its bytes to the newest slab. */
  private relocate(chunk: number): void {
    const t = this.table;
    for (let r = 1; r <= t.highWater; r++) {
      if (!t.inUse(r) || t.chunk(r) !== chunk) continue;
      const length = t.regionLength(r);
      const from = t.offset(r);
      const to = this.arena.alloc(length);
      const offset = this.arena.offset;
      this.arena.buffer(chunk).copy(this.arena.buffer(to), offset, from, from + length);
      t.moved(r, to, offset);
      this.arena.release(chunk, length);
      const view = this.views.get(r);
      if (view) view.region = this.arena.view(to, t.bodyAt(r), t.bodyLength(r) + t.brLength(r));
    }
  }

  private holdHeaders(headers: object): void {
    const users = this.headerUsers.get(headers) ?? 0;
    if (users === 0) this.headerBytes += headerSetSize(headers as CacheEntry['headers']);
    this.headerUsers.set(headers, users + 1);
  }

  private releaseHeaders(headers: object): void {
    const users = this.headerUsers.get(headers);
    if (users === undefined) return;
    if (users > 1) {
      this.headerUsers.set(headers, users - 1);
      return;
    }
    this.headerUsers.delete(headers);
    this.headerBytes -= headerSetSize(headers as CacheEntry['headers']);
  }
}
