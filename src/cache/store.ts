/**
 * The in-process tiers: one byte-budgeted LRU for shared entries and a separate one for
 * per-session entries, so that many sessions cannot evict what everyone shares (tier.ts), and
 * what crosses them: purges, invalidations, the guard against storing an answer a purge made
 * while it was fetched overtook.
 *
 * The tiers know no lifetimes: entries live past their TTL for the grace and stale-if-error
 * windows, freshness is decided here with the injected clock, and the lookup that finds an
 * entry dead deletes it.
 */
import type { EvictionReason, Tier } from '../words/outcomes.js';
import type { CacheEntry } from './entry.js';
import { type Guarded, guardTags, moduleGuard, slotGuard, urlGuard } from './guards.js';
import { type Freshness, freshnessAt, remainingKeepMs } from '../policy/freshness.js';
import { entrySize, Tiered } from './tier.js';

export type { Freshness } from '../policy/freshness.js';

export type { CacheEntry } from './entry.js';

export { entrySize, headerSetSize } from './tier.js';

export type { EvictionReason } from '../words/outcomes.js';

export interface StoreOptions {
  readonly sharedMaxBytes: number;
  readonly sessionMaxBytes: number;
  readonly maxEntries: number;
  readonly graceMs: number;
  readonly staleIfErrorMs: number;
  readonly now: () => number;
  readonly onEvict?: (tier: Tier, reason: EvictionReason, count: number) => void;
  /** Each entry a change invalidated, by the modules its request ran (metrics by module). */
  readonly onInvalidated?: (modules: readonly string[]) => void;
  /** Tests only: the keys' hash (cache/entry-table.ts), to make colliding keys on demand. */
  readonly hashKey?: (key: string) => number;
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
    return this.tiers[tier].get(key);
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
    // Stored as the tier's own copy (a record and its bytes in the arena), whatever the caller
    // later does with what it gave, or gives again elsewhere.
    return this.tiers[tier].set(key, entry, now);
  }

  /**
   * Add the br form to the entry `current` under `key` (tier.ts Tiered.addBrotli): false when
   * the key holds another entry by now, or it no longer fits.
   */
  addBrotli(tier: Tier, key: string, current: CacheEntry, br: Buffer): boolean {
    return this.tiers[tier].addBrotli(key, current, br, this.opts.now());
  }

  /**
   * Replace the identity entry `current` under `key` by its gzip form (tier.ts Tiered.addGzip):
   * false when the key holds another entry by now, or it no longer fits.
   */
  addGzip(tier: Tier, key: string, current: CacheEntry, gzip: Buffer, headers: CacheEntry['headers']): boolean {
    return this.tiers[tier].addGzip(key, current, gzip, headers, this.opts.now());
  }

  /** Remove one entry (a dead one found on lookup). */
  delete(tier: Tier, key: string): void {
    this.tiers[tier].deleteKeys([key], 'expired');
  }

  /**
   * PURGE <url>: every variant (every slot, every keyed header) of that URL, in both tiers;
   * recorded, as every purge below is, so that an answer fetched before it is not stored after
   * it (guards.ts).
   */
  purgeUrl(urlKey: string): number {
    this.invalidations.record([urlGuard(urlKey)]);
    let n = 0;
    for (const t of Object.values(this.tiers)) n += t.deleteRecords(t.withUrl(urlKey), 'purge');
    return n;
  }

  /**
   * A change (policy/changes.ts): every entry, in both tiers, that depends on one of
   * `tags`; recorded, so that an answer fetched before it is not stored after it.
   */
  invalidate(tags: readonly string[]): number {
    this.invalidations.record(tags);
    let n = 0;
    for (const t of Object.values(this.tiers)) {
      const doomed: number[] = [];
      for (const tag of tags) doomed.push(...t.withTag(tag));
      if (this.opts.onInvalidated && doomed.length > 0) for (const modules of t.modulesOfRecords(doomed)) this.opts.onInvalidated(modules);
      n += t.deleteRecords(doomed, 'invalidated');
    }
    return n;
  }

  /** Everything (the admin's purge of all); recorded, so that no answer fetched before it is stored after it. */
  flushAll(): number {
    this.invalidations.recordFlush();
    let n = 0;
    for (const t of Object.values(this.tiers)) n += t.deleteRecords(t.all(), 'purge');
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
  invalidatedSince(entry: Guarded, mark: number, exceptGaps = false): boolean {
    // The common case, nothing invalidated meanwhile, builds no tag list.
    return mark !== this.invalidations.mark() && this.invalidations.invalidatedSince(guardTags(entry), mark, exceptGaps);
  }

  /** Logout, or a rights change of the session's user: every entry of a session. */
  evictSession(slot: string): number {
    this.invalidations.record([slotGuard(slot)]);
    const t = this.tiers.session;
    return t.deleteRecords(t.withSlot(slot), 'logout');
  }

  /**
   * A user's answers (policy/dependencies.ts userTag: only sessions' carry one), removed as a
   * session's are (evictSession: counted as `logout`, not as a change of the wiki's), and
   * recorded, so that an answer fetched before it is not stored after it.
   */
  evictUser(tag: string): number {
    this.invalidations.record([tag]);
    const t = this.tiers.session;
    return t.deleteRecords(t.withTag(tag), 'logout');
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
      // Every entry, stale or not: the tiers keep no lifetimes.
      const doomed = t.all().filter((r) => match(t.entryOf(r)));
      n += t.deleteRecords(doomed, 'purge');
    }
    return n;
  }

  /**
   * Every entry of a tier, stale ones too, least recently used first, their recency untouched
   * (inspection): read all at once, since a record freed meanwhile may hold another entry by
   * the time a lazy reader came to it.
   */
  entries(tier: Tier): CacheEntry[] {
    const t = this.tiers[tier];
    return t.all().map((r) => t.entryOf(r));
  }

  /**
   * Every variant of `urlKey` held here (every slot and keyed header, both tiers), stale ones
   * too, their recency untouched (inspection: GET /cache on the admin listener). `bytes`: what
   * the entry is charged against its tier's budget (tier.ts entrySize).
   */
  variants(urlKey: string): { readonly tier: Tier; readonly key: string; readonly entry: CacheEntry; readonly bytes: number }[] {
    const out: { tier: Tier; key: string; entry: CacheEntry; bytes: number }[] = [];
    for (const tier of ['shared', 'session'] as const) {
      const t = this.tiers[tier];
      for (const r of t.withUrl(urlKey)) {
        const key = t.keyOf(r);
        const entry = t.entryOf(r);
        out.push({ tier, key, entry, bytes: entrySize(key, entry) });
      }
    }
    return out;
  }

  /** The modules of every entry of a tier, one list per entry (inspection: GET /cache/stats), read without making views. */
  modulesOfEntries(tier: Tier): (readonly string[])[] {
    const t = this.tiers[tier];
    return t.modulesOfRecords(t.all());
  }

  /**
   * A tier's fresh entries, least recently used first, their recency untouched (a reload's hand-over,
   * hand-over.ts), read lazily while the tier keeps serving: the keys are taken at once (walking
   * the LRU list while hits move entries in it could stop short), each entry when its turn
   * comes (one purged or evicted meanwhile is skipped).
   */
  *oldestFirst(tier: Tier): Generator<[string, CacheEntry]> {
    const t = this.tiers[tier];
    for (const key of t.all().map((r) => t.keyOf(r))) {
      const entry = t.peek(key);
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
    if (this.tiers[tier].has(key)) return false;
    if (this.invalidations.mark() !== 0 && this.invalidations.invalidatedSince(guardTags(entry), 0, true)) return false;
    return this.set(tier, key, entry);
  }

  /**
   * `bytes`: everything charged to the budget: the entries (entrySize), their header sets once
   * each, the views kept for entries read (`viewBytes`) and the table's own (`tableBytes`: its
   * buckets, and records once used and now free, tier.ts). `bodyBytes`: the stored bodies (every stored form); `slabBytes`: memory allocated for them
   * (bodies plus the arena's bounded waste); `identityBytes`: the same answers' own bytes (the
   * stored ones decoded), so that identityBytes ÷ bodyBytes is what compression saves.
   */
  stats(tier: Tier): {
    entries: number;
    bytes: number;
    budget: number;
    bodyBytes: number;
    slabBytes: number;
    identityBytes: number;
    tableBytes: number;
    viewBytes: number;
  } {
    const t = this.tiers[tier];
    const arena = t.arenaStats();
    return {
      identityBytes: t.identityBytes,
      entries: t.entries,
      bytes: t.bytes,
      budget: t.maxBytes,
      bodyBytes: t.bodyBytes,
      tableBytes: t.tableBytes,
      viewBytes: t.viewBytes,
      slabBytes: arena.slabBytes + arena.ownBytes + arena.spareBytes,
    };
  }
}

/**
 * What has been invalidated lately, so that an answer fetched before a change cannot be stored
 * after it. Without this, a miss that asked the wiki just before an edit, and got its answer just
 * after the edit's PURGE removed the old entries, would store the old page for a whole (long) TTL.
 *
 * Every invalidation takes the next sequence number and records it for each tag. A fetch notes
 * the number before it asks the wiki (mark); its answer is stored only if none of its tags was
 * invalidated since (invalidatedSince). A flush of everything counts for every tag.
 *
 * Bounded: the most recent `maxTags` tags are kept; a mark older than the oldest forgotten record
 * is answered conservatively (invalidated: the answer is delivered, not stored). Fetches last
 * seconds; a tag is forgotten only after `maxTags` newer ones.
 */
export class InvalidationLog {
  private seq = 0;
  private readonly tags = new Map<string, number>();
  /** Marks below this may have missed a forgotten record. */
  private forgottenUpTo = 0;
  private flushedAt = 0;
  /** The last flush that removed entries (a purge of everything), not a gap: see invalidatedSince. */
  private purgedAllAt = 0;

  constructor(private readonly maxTags = 100_000) {}

  mark(): number {
    return this.seq;
  }

  record(tags: readonly string[]): void {
    const n = ++this.seq;
    for (const tag of tags) {
      this.tags.delete(tag);
      this.tags.set(tag, n);
    }
    while (this.tags.size > this.maxTags) {
      const [oldest, at] = this.tags.entries().next().value as [string, number];
      this.tags.delete(oldest);
      this.forgottenUpTo = Math.max(this.forgottenUpTo, at);
    }
  }

  /**
   * Everything is invalidated: a purge of everything, or a gap in the change signals (nothing
   * stored before it is vouched for; the entries held stay, not fresh).
   */
  recordFlush(cause: 'purge' | 'gap' = 'purge'): void {
    this.flushedAt = ++this.seq;
    if (cause === 'purge') this.purgedAllAt = this.seq;
  }

  /**
   * `exceptGaps`: for entries that keep their storedAt (a reload's hand-over), which a gap already
   * makes not fresh (freshness.ts), as it does every entry held: only purges count. An answer
   * fetched meanwhile counts gaps too: stored, it would be fresh from now.
   */
  invalidatedSince(deps: readonly string[], mark: number, exceptGaps = false): boolean {
    if (this.seq === mark) return false;
    if ((exceptGaps ? this.purgedAllAt : this.flushedAt) > mark || this.forgottenUpTo > mark) return true;
    for (const tag of deps) if ((this.tags.get(tag) ?? 0) > mark) return true;
    return false;
  }
}
