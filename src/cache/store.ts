/**
 * The in-process tiers: one byte-budgeted LRU for shared entries and a separate one for
 * per-session entries, so that many sessions cannot evict what everyone shares.
 *
 * lru-cache 11 semantics relied on (perf-anchors §3): sizes must be positive integers; an
 * oversize set() stores nothing and removes what the key held; `dispose` runs for
 * evict/delete/set. lru-cache knows no lifetimes: entries live past their TTL for the grace and
 * stale-if-error windows, freshness is decided here with the injected clock, and the lookup
 * that finds an entry dead deletes it.
 */
import { LRUCache } from 'lru-cache';
import type { EvictionReason, Tier } from '../outcomes.js';
import { type BodyAccess, BodyArena } from './arena.js';
import { compactModules, sharedHeaders } from './compact.js';
import type { CacheEntry } from './entry.js';
import { type Guarded, guardTags, moduleGuard, slotGuard, urlGuard } from './guards.js';
import { type Freshness, freshnessAt, remainingKeepMs } from './freshness.js';
import { InvalidationLog } from './invalidation-log.js';

export type { Freshness } from './freshness.js';

export type { CacheEntry } from './entry.js';

/**
 * The store's own copy of an entry, compacted (compact.ts): frozen headers shared with every
 * entry whose header set is equal, a shared module list. Its stored forms (the body, and the br
 * form when there is one) are not held as Buffers but as one run of bytes in the arena's slab
 * (arena.ts), `region`: a Buffer object costs ~96 bytes of heap, an eighth of what a 1 KiB entry
 * cost besides its body (bench/memory.mjs), while making a view when the body is read costs
 * ~30-40 ns, once per delivery. Reading `body` (or `br`) gives a view of exactly those bytes;
 * only the arena sets the region (moving it to another slab sets it again). Never spread one
 * ({...entry} has no body): it is read field by field.
 */
class StoredEntry implements CacheEntry {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly storedAt: number;
  readonly ttlMs: number;
  readonly urlKey: string;
  readonly modules: readonly string[];
  readonly slot: string | undefined;
  readonly deps: readonly string[];
  readonly coding: 'gzip' | undefined;
  readonly identityBytes: number | undefined;
  #bytes: ArrayBufferLike;
  #offset: number;
  #length: number;
  /** Where the br form begins in the region (the body's length); the region's length without one. */
  readonly #split: number;

  constructor(entry: CacheEntry, urlKey: string, storedAt: number) {
    this.status = entry.status;
    this.headers = sharedHeaders(entry.headers);
    this.storedAt = storedAt;
    this.ttlMs = entry.ttlMs;
    this.urlKey = urlKey;
    this.modules = compactModules(entry.modules);
    this.slot = entry.slot;
    // Tag lists repeat as module lists do (the same query shapes): shared the same way.
    this.deps = compactModules(entry.deps);
    this.coding = entry.coding;
    this.identityBytes = entry.coding ? entry.identityBytes : undefined;
    const br = entry.coding ? entry.br : undefined;
    // One run of bytes for both forms; the arena copies it into its slab.
    const region = br ? Buffer.concat([entry.body, br]) : entry.body;
    this.#split = entry.body.length;
    this.#bytes = region.buffer;
    this.#offset = region.byteOffset;
    this.#length = region.length;
  }

  get body(): Buffer {
    return Buffer.from(this.#bytes, this.#offset, this.#split);
  }

  get br(): Buffer | undefined {
    return this.#split === this.#length ? undefined : Buffer.from(this.#bytes, this.#offset + this.#split, this.#length - this.#split);
  }

  /** Every stored form, as the arena holds them (arena.ts BodyAccess). */
  get region(): Buffer {
    return Buffer.from(this.#bytes, this.#offset, this.#length);
  }

  set region(view: Buffer) {
    this.#bytes = view.buffer;
    this.#offset = view.byteOffset;
    this.#length = view.length;
  }
}

/** How the arena reads and moves an entry's stored bytes. */
const REGION: BodyAccess<StoredEntry> = {
  get: (entry) => entry.region,
  set: (entry, view) => (entry.region = view),
};

/**
 * Memory an entry costs besides its body, its key, its tags and its header set, rounded up: the
 * entry object, its URL key (a slice of the key), the LRU's and the indexes' slots, the arena's
 * share of slab waste. Its header set is charged apart (headerSetSize), once per tier however
 * many entries share it (Tiered.headerUsers). Set from bench/memory.mjs: a 256 MB store fed 4x
 * its budget, the header sets shared, grew the process by 0.97x the budget; with no set shared
 * (the worst case: headers of its own per entry), 0.89-0.93x at 100 and 256 MB (HEADER_SET_BYTES
 * 384; with 256, 0.99-1.05x at 100 MB: malloc and old-space pages vary from run to run).
 */
const ENTRY_OVERHEAD_BYTES = 640;

/** A tag index slot (a Set member, or a Map entry for the first key of a tag). */
const TAG_INDEX_BYTES = 48;

/** What a tier charges for one entry, its header set aside (headerSetSize). */
export function entrySize(key: string, entry: CacheEntry): number {
  // One byte per key character: keys are percent-encoded URLs.
  let size = ENTRY_OVERHEAD_BYTES + key.length + entry.body.length + (entry.br?.length ?? 0);
  // Each tag is held once per entry in the tag index, and in its list unless the list is shared.
  for (const tag of entry.deps) size += TAG_INDEX_BYTES + tag.length;
  return size;
}

/**
 * A header set's own memory besides its strings: the frozen object and its property store
 * (compact.ts), and its place in the tier's count of users (Tiered.headerUsers).
 */
const HEADER_SET_BYTES = 384;

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

export type { EvictionReason } from '../outcomes.js';

/** The answer's own length: the decoded length of a compressed entry. */
function identityLength(entry: CacheEntry): number {
  return entry.coding ? (entry.identityBytes ?? 0) : entry.body.length;
}

export interface StoreOptions {
  readonly sharedMaxBytes: number;
  readonly sessionMaxBytes: number;
  readonly maxEntries: number;
  readonly graceMs: number;
  readonly staleIfErrorMs: number;
  readonly now: () => number;
  readonly onEvict?: (tier: Tier, reason: EvictionReason, count: number) => void;
}

/**
 * Index from a URL (or a session slot) to the keys of its entries. Most URLs have one variant,
 * so a lone key is kept as the string itself: a one-element Set per entry cost ~150 bytes of heap
 * (measured with bench/memory.mjs).
 */
type KeyIndex = Map<string, string | Set<string>>;

function* keysOf(value: string | Set<string> | undefined): Iterable<string> {
  if (value === undefined) return;
  if (typeof value === 'string') yield value;
  else yield* value;
}

/**
 * Slabs of 1/64 of the tier's budget, within 128 KiB-1 MiB: two slabs of slack are 3.1 % of
 * budgets from 8 MiB up (more of the smaller ones). 128 KiB at least, so that with
 * MALLOC_MMAP_THRESHOLD_=131072 (cluster/worker-env.ts) every slab is a mapping of its own.
 */
function slabBytesFor(maxBytes: number): number {
  return Math.min(1024 * 1024, Math.max(128 * 1024, Math.floor(maxBytes / 64)));
}

class Tiered {
  readonly lru: LRUCache<string, StoredEntry>;
  readonly byUrl: KeyIndex = new Map();
  readonly bySlot: KeyIndex = new Map();
  /** Dependency tag → keys of the entries that depend on it (invalidation). */
  readonly byTag: KeyIndex = new Map();
  readonly arena: BodyArena<StoredEntry>;
  private removing: EvictionReason | undefined;
  /** Set while an entry is replaced by itself with a br form added (not an eviction). */
  private upgrading = false;
  /** The answers' own bytes of the entries held (the stored bytes, decoded): the compression ratio. */
  identityBytes = 0;
  /**
   * Entries of this tier holding each header set. Equal header sets are one frozen object
   * (compact.ts sharedHeaders): a set costs its entries one pointer each, so its bytes are
   * charged once, while any entry holds it (headerBytes), not once per entry. Charging each
   * entry its header strings counted ~250 bytes per entry that were not there (the store fed
   * 4x its budget grew by 0.80x it with the sets shared, 1.03x with none shared).
   */
  private readonly headerUsers = new Map<object, number>();
  /** headerSetSize of every header set some entry of this tier holds: part of the budget. */
  headerBytes = 0;

  constructor(
    readonly tier: Tier,
    maxBytes: number,
    private readonly opts: StoreOptions,
  ) {
    this.arena = new BodyArena({ slabBytes: slabBytesFor(maxBytes), maxWasteRatio: 0.1 }, REGION);
    this.lru = new LRUCache<string, StoredEntry>({
      // No `max`: with one, lru-cache preallocates ~45 bytes of arrays per allowed entry
      // (9 MB per tier at the default 200,000) whether or not they are used. The count bound
      // is kept in set().
      max: 0,
      // Sizes are given to set() (entrySize, plus the header set when it is new to the tier).
      maxSize: maxBytes,
      // No ttl: freshness() decides from the entry's own storedAt/ttlMs whether it is fresh,
      // stale or dead (a dead one is deleted by the lookup that finds it), and lru-cache's ttl
      // would cost two slots per entry (~20 bytes) and a clock read per lookup for nothing.
      dispose: (entry, key, reason) => {
        this.unindex(key, entry);
        this.releaseHeaders(entry.headers);
        this.arena.release(entry);
        this.identityBytes -= identityLength(entry);
        if (this.upgrading) return;
        const why: EvictionReason =
          reason === 'evict' ? 'size' : reason === 'set' ? 'replaced' : (this.removing ?? 'purge');
        opts.onEvict?.(this.tier, why, 1);
      },
    });
  }

  private index(map: KeyIndex, id: string, key: string): void {
    const current = map.get(id);
    if (current === undefined || current === key) map.set(id, key);
    else if (typeof current === 'string') map.set(id, new Set([current, key]));
    else current.add(key);
  }

  private unindexOne(map: KeyIndex, id: string, key: string): void {
    const current = map.get(id);
    if (current === undefined) return;
    if (typeof current === 'string') {
      if (current === key) map.delete(id);
      return;
    }
    current.delete(key);
    if (current.size === 1) map.set(id, current.values().next().value as string);
    else if (current.size === 0) map.delete(id);
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

  keysFor(map: KeyIndex, id: string): string[] {
    return [...keysOf(map.get(id))];
  }

  private unindex(key: string, entry: CacheEntry): void {
    this.unindexOne(this.byUrl, entry.urlKey, key);
    if (entry.slot) this.unindexOne(this.bySlot, entry.slot, key);
    for (const tag of entry.deps) this.unindexOne(this.byTag, tag, key);
  }

  set(key: string, given: CacheEntry, now: number): boolean {
    // Keys begin with their URL key (request.ts cacheKey): hold the URL key as a slice of the
    // key, which V8 keeps as a reference into it (from 13 characters) rather than a second copy
    // of the URL. Same characters, same string.
    const urlKey = key.startsWith(given.urlKey) ? key.slice(0, given.urlKey.length) : given.urlKey;
    // A writer whose clock is ahead of ours (an entry from another replica): counted from now,
    // so that it is never fresh or kept here longer than its whole window (as Redis' PX,
    // freshness.ts remainingKeepMs, bounds it there).
    const entry = new StoredEntry(given, urlKey, Math.min(given.storedAt, now));
    // Its header set is charged with it unless another entry of the tier holds it already (the
    // entry it replaces does not count: it goes).
    const replaced = this.lru.peek(key);
    const users = (this.headerUsers.get(entry.headers) ?? 0) - (replaced?.headers === entry.headers ? 1 : 0);
    const setBytes = users > 0 ? 0 : headerSetSize(entry.headers);
    // Larger than the budget with its set: given a size lru-cache refuses, which stores nothing
    // (and drops what the key held, as for any oversize entry).
    const size = entrySize(key, entry);
    // Measured with its set whether or not another entry holds it now: lru-cache may evict that
    // one to make room, and the entry must fit the budget alone with its set (the loop below).
    const alone = size + (setBytes || headerSetSize(entry.headers));
    this.lru.set(key, entry, { size: alone > this.lru.maxSize ? this.lru.maxSize + 1 : size });
    // An oversize set() stores nothing in lru-cache (and drops what the key held): only index what was kept.
    if (this.lru.peek(key) !== entry) return false;
    this.holdHeaders(entry.headers);
    this.arena.place(entry);
    this.identityBytes += identityLength(entry);
    // pop() takes the least recently used entry (disposed as an eviction, like a size eviction).
    // lru-cache made room for the entry; the header sets held are part of the budget too. It
    // never pops the entry itself: with its set it fits the budget alone.
    while (this.lru.size > this.opts.maxEntries || (this.lru.size > 0 && this.lru.calculatedSize + this.headerBytes > this.lru.maxSize)) this.lru.pop();
    // Popped itself after all (a maxEntries of 0): disposed, so not indexed, and not kept.
    if (this.lru.peek(key) !== entry) return false;
    this.index(this.byUrl, entry.urlKey, key);
    if (entry.slot) this.index(this.bySlot, entry.slot, key);
    for (const tag of entry.deps) this.index(this.byTag, tag, key);
    return true;
  }

  /**
   * The entry under `key`, still `current`, again with its br form (representations.ts): false
   * when the key holds another entry by now (replaced, purged, evicted) or the larger entry no
   * longer fits. Its place in the LRU is refreshed; it is not counted as an eviction.
   */
  addBrotli(key: string, current: CacheEntry, br: Buffer, now: number): boolean {
    if (this.lru.peek(key) !== current || !current.coding) return false;
    const upgraded: CacheEntry = {
      status: current.status,
      headers: current.headers,
      body: current.body,
      coding: current.coding,
      identityBytes: current.identityBytes,
      br,
      storedAt: current.storedAt,
      ttlMs: current.ttlMs,
      urlKey: current.urlKey,
      modules: current.modules,
      slot: current.slot,
      deps: current.deps,
    };
    this.upgrading = true;
    try {
      return this.set(key, upgraded, now);
    } finally {
      this.upgrading = false;
    }
  }

  deleteAll(keys: Iterable<string>, reason: EvictionReason): number {
    let n = 0;
    this.removing = reason;
    try {
      for (const key of [...keys]) if (this.lru.delete(key)) n++;
    } finally {
      this.removing = undefined;
    }
    return n;
  }
}

export class CacheStore {
  private readonly tiers: Record<Tier, Tiered>;
  private readonly invalidations = new InvalidationLog();
  /** expireBefore(): entries stored before this are no longer fresh (freshness.ts). */
  private staleBefore = 0;

  constructor(private readonly opts: StoreOptions) {
    this.tiers = {
      shared: new Tiered('shared', opts.sharedMaxBytes, opts),
      session: new Tiered('session', opts.sessionMaxBytes, opts),
    };
  }

  get(tier: Tier, key: string): CacheEntry | undefined {
    return this.tiers[tier].lru.get(key);
  }

  /** `now`: a clock reading the caller already made for this request (the fresh-hit path's). */
  freshness(entry: CacheEntry, now: number = this.opts.now()): Freshness {
    return freshnessAt(entry, now, this.opts, this.staleBefore);
  }

  /**
   * Nothing stored before `at` is vouched for any more (a gap in the change signals): such entries
   * are refreshed at their next use, and still answer when the wiki fails (stale-if-error).
   */
  expireBefore(at: number): void {
    if (at > this.staleBefore) this.staleBefore = at;
    this.invalidations.recordFlush('gap');
  }

  /**
   * Keep `entry` until storedAt + ttl + the longer stale window (for an entry fetched just now,
   * that is its whole lifetime; for one copied from Redis, what is left of it): the lookup that
   * finds it dead deletes it, and the LRU evicts it sooner when space is needed. False when it
   * was not kept (too large, or already past every window).
   */
  set(tier: Tier, key: string, entry: CacheEntry): boolean {
    const now = this.opts.now();
    if (remainingKeepMs(entry, now, this.opts) === 0) return false;
    // Stored as the store's own compact copy (StoredEntry): one entry object, one place in one
    // arena, whatever the caller later does with what it gave, or gives again elsewhere.
    return this.tiers[tier].set(key, entry, now);
  }

  /**
   * Add the br form to the entry `current` under `key` (store.ts Tiered.addBrotli): false when
   * the key holds another entry by now, or it no longer fits.
   */
  addBrotli(tier: Tier, key: string, current: CacheEntry, br: Buffer): boolean {
    return this.tiers[tier].addBrotli(key, current, br, this.opts.now());
  }

  /** Remove one entry (a dead one found on lookup). */
  delete(tier: Tier, key: string): void {
    this.tiers[tier].deleteAll([key], 'expired');
  }

  /**
   * PURGE <url>: every variant (every slot, every keyed header) of that URL, in both tiers;
   * recorded, as every purge below is, so that an answer fetched before it is not stored after
   * it (guards.ts).
   */
  purgeUrl(urlKey: string): number {
    this.invalidations.record([urlGuard(urlKey)]);
    let n = 0;
    for (const t of Object.values(this.tiers)) n += t.deleteAll(t.keysFor(t.byUrl, urlKey), 'purge');
    return n;
  }

  /**
   * A change (invalidation/changes.ts): every entry, in both tiers, that depends on one of
   * `tags`; recorded, so that an answer fetched before it is not stored after it.
   */
  invalidate(tags: readonly string[]): number {
    this.invalidations.record(tags);
    let n = 0;
    for (const t of Object.values(this.tiers)) {
      const doomed = new Set<string>();
      for (const tag of tags) for (const key of t.keysFor(t.byTag, tag)) doomed.add(key);
      n += t.deleteAll(doomed, 'invalidated');
    }
    return n;
  }

  /** Everything (the admin's purge of all); recorded, so that no answer fetched before it is stored after it. */
  flushAll(): number {
    this.invalidations.recordFlush();
    let n = 0;
    for (const t of Object.values(this.tiers)) n += t.deleteAll([...t.lru.keys()], 'purge');
    return n;
  }

  /** Noted before asking the wiki (InvalidationLog). */
  invalidationMark(): number {
    return this.invalidations.mark();
  }

  /**
   * Whether an answer for this URL, session and modules, with these dependencies, asked for at
   * `mark`, may predate an invalidation or a purge made since (guards.ts).
   */
  invalidatedSince(entry: Guarded, mark: number): boolean {
    // The common case, nothing invalidated meanwhile, builds no tag list.
    return mark !== this.invalidations.mark() && this.invalidations.invalidatedSince(guardTags(entry), mark);
  }

  /** Logout, or a rights change of the session's user: every entry of a session. */
  evictSession(slot: string): number {
    this.invalidations.record([slotGuard(slot)]);
    const t = this.tiers.session;
    return t.deleteAll(t.keysFor(t.bySlot, slot), 'logout');
  }

  /** Admin purge by module: every entry that ran it (the module of its metrics label, or a bare name). */
  purgeModule(module: string): number {
    this.invalidations.record([moduleGuard(module)]);
    return this.removeWhere((e) => e.modules.includes(module));
  }

  /**
   * Admin purges by URL prefix, or by any other test: recorded as a flush (no guard tag names a
   * prefix; these are rare, an answer in flight is delivered, not stored).
   */
  purgeWhere(match: (entry: CacheEntry) => boolean): number {
    this.invalidations.recordFlush();
    return this.removeWhere(match);
  }

  private removeWhere(match: (entry: CacheEntry) => boolean): number {
    let n = 0;
    for (const t of Object.values(this.tiers)) {
      const doomed: string[] = [];
      // Every entry, stale or not: lru-cache keeps no lifetimes here.
      for (const [key, entry] of t.lru.entries()) if (match(entry)) doomed.push(key);
      n += t.deleteAll(doomed, 'purge');
    }
    return n;
  }

  /**
   * A tier's fresh entries, least recently used first, their recency untouched (a reload's hand-over,
   * hand-over.ts), read lazily while the tier keeps serving: the keys are taken at once (walking
   * lru-cache's list while hits move entries in it could stop short), each entry when its turn
   * comes (one purged or evicted meanwhile is skipped).
   */
  *oldestFirst(tier: Tier): Generator<[string, CacheEntry]> {
    const lru = this.tiers[tier].lru;
    for (const key of [...lru.rkeys()]) {
      const entry = lru.peek(key);
      // Fresh ones only: one this process no longer vouches for (a gap, the purge channel lost)
      // would be fresh again in a process that took no such gap.
      if (entry && this.freshness(entry) === 'fresh') yield [key, entry];
    }
  }

  /**
   * Take an entry another process of this replica held (a reload's hand-over), unless this one
   * holds the key already (fetched since it started: newer) or a purge or invalidation this
   * process applied since it started reached it (the sender may have encoded it before). Its
   * storedAt is kept: a gap this process took makes it not fresh, as it does every entry.
   */
  adopt(tier: Tier, key: string, entry: CacheEntry): boolean {
    if (this.tiers[tier].lru.has(key)) return false;
    if (this.invalidations.mark() !== 0 && this.invalidations.invalidatedSince(guardTags(entry), 0, true)) return false;
    return this.set(tier, key, entry);
  }

  /**
   * `bodyBytes`: the stored bodies (every stored form); `slabBytes`: memory allocated for them
   * (bodies plus the arena's bounded waste); `identityBytes`: the same answers' own bytes (the
   * stored ones decoded), so that identityBytes ÷ bodyBytes is what compression saves.
   */
  stats(tier: Tier): { entries: number; bytes: number; budget: number; bodyBytes: number; slabBytes: number; identityBytes: number } {
    const t = this.tiers[tier];
    const arena = t.arena.stats();
    return {
      identityBytes: t.identityBytes,
      entries: t.lru.size,
      bytes: t.lru.calculatedSize + t.headerBytes,
      budget: t.lru.maxSize,
      bodyBytes: arena.liveBytes + arena.ownBytes,
      slabBytes: arena.slabBytes + arena.ownBytes,
    };
  }
}
