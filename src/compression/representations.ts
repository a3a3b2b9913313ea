/**
 * An answer's representations (RFC 9110 §3.2) beside the one stored: what a client gets when it
 * takes something other than the stored gzip, made once and kept where that pays.
 *
 * - Identity for clients that take no compression: the stored gzip decoded. Hot ones are kept
 *   decoded in a small LRU bounded by bytes (a fraction of the shared tier's budget), so a
 *   client that polls one answer without Accept-Encoding costs a lookup, not a gunzip per hit.
 *   Keyed by a number given to each entry, never by the entry: an entry evicted from the store
 *   must not be kept alive (nor its slab) by a copy of its answer.
 * - br for hot entries: a client preferring br that finds an entry without it gets gzip, and
 *   counts; at the `brotliAfterHits`th such hit the entry's br is made at quality 11 on libuv's
 *   thread pool, one entry at a time, and added to the entry if it is still the one stored for
 *   its key (store.ts addBrotli). br at 11 is ~19 % smaller than the gzip; it costs ~1 ms of CPU
 *   per KB once, and its bytes in the budget: after four hits it has saved on the wire what it
 *   holds in memory. Only the local tier gets it: writing it to Redis could bring back an entry
 *   another replica has purged meanwhile.
 * - A coding a stored entry is not held in, for a client that refuses identity
 *   (`br, identity;q=0` on an entry without br): made once and kept in the same bounded LRU as
 *   the decoded answers, never made again per hit. Made per hit, a 1 MB answer's br cost ~22 ms
 *   of CPU a hit, and hits are never limited: 35 times a gzip hit's CPU for whoever sent that
 *   header (commit 1b3dbac, test/in-process/attack-compression-on-every-hit.test.ts).
 * - Any coding for an answer not stored: compressed once for that answer (codings.ts).
 * - gzip for an entry stored as it is (its miss's client took no gzip: steps/flow.ts): made by
 *   the first hit whose client prefers gzip to identity, and put in the entry's place if it is
 *   still the one stored (store.ts addGzip), as the stored gzip of a miss would have been; local
 *   only, as br. An answer gzip does not pay for is tried once per entry.
 */
import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { CacheEntry, CacheStore } from '../cache/store.js';
import { entryFields } from '../cache/entry.js';
import { varyOnAcceptEncoding } from '../policy/policy.js';
import type { Tier } from '../words/outcomes.js';
import {
  BR_UPGRADE_QUALITY,
  type Coding,
  type CompressionCost,
  compressible,
  encodeMeasured,
  gunzip,
  gunzipAsync,
  prefersGzipToIdentity,
  storedForm,
  storedFormSync,
  type StoredForm,
} from '../http/codings.js';
import type { CompressionMetrics } from './metrics.js';

export interface RepresentationsOptions {
  readonly store: CacheStore;
  readonly metrics: CompressionMetrics;
  /** Bytes of decoded answers kept for identity clients (0: none kept). */
  readonly decodedMaxBytes: number;
  /** br-preferring hits on an entry before its br is made (0: never). */
  readonly brotliAfterHits: number;
  readonly log: Logger;
}

/** Decoded on the request's thread up to this many bytes of gzip; larger ones on the thread pool (full path only). */
const SYNC_DECODE_MAX = 64 * 1024;
/** Entries whose answer is larger get no br: quality 11 would take ~1 ms of CPU per KB. */
const UPGRADE_MAX_BYTES = 256 * 1024;
/** br must save at least this fraction of the gzip to be kept. */
const UPGRADE_MIN_SAVING = 0.05;
/** Upgrades waiting; more are dropped (they come back at the next hits). */
const UPGRADE_QUEUE_MAX = 64;

interface Upgrade {
  readonly tier: Tier;
  readonly key: string;
  readonly entry: CacheEntry;
  readonly charge: BrotliCharge;
}

/**
 * The store budget of the client whose hit asked for a br form (steps/store-charge.ts). The br
 * form grows the entry in the tier as a store would: uncharged, one client asking its own
 * entries' hits stored them again at ~1.8× its budget, evicting others'
 * (test/in-process/attack-brotli-upgrades-past-the-store-budget.test.ts).
 */
export interface BrotliCharge {
  affords(bytes: number): boolean;
  take(bytes: number): boolean;
}

export class Representations {
  private readonly decoded: LRUCache<number, Buffer> | undefined;
  private readonly ids = new WeakMap<CacheEntry, number>();
  private nextId = 1;
  /** br-preferring hits per entry, until its br is asked for. */
  private readonly wants = new WeakMap<CacheEntry, number>();
  private readonly queue: Upgrade[] = [];
  /** Identity entries whose gzip was made once already (kept, or not worth it). */
  private readonly gzipTried = new WeakSet<CacheEntry>();
  private upgrading = false;

  constructor(private readonly opts: RepresentationsOptions) {
    this.decoded =
      opts.decodedMaxBytes > 0 ? new LRUCache<number, Buffer>({ maxSize: opts.decodedMaxBytes, sizeCalculation: (b) => Math.max(1, b.length) }) : undefined;
  }

  get metrics(): CompressionMetrics {
    return this.opts.metrics;
  }

  /** Bytes of decoded answers kept now. */
  decodedBytes(): number {
    return this.decoded?.calculatedSize ?? 0;
  }

  /**
   * `entry` in `coding` if it is at hand without compressing: a stored form, or the answer
   * (decoded here when small, and kept). Undefined: it has to be made (`bytesOf`).
   */
  ready(entry: CacheEntry, coding: Coding): Buffer | undefined {
    if (coding === 'identity') {
      if (!entry.coding) return entry.body;
      const id = this.ids.get(entry);
      const kept = id === undefined ? undefined : this.decoded?.get(id);
      if (kept) return kept;
      const body = entry.body;
      return body.length <= SYNC_DECODE_MAX ? this.keep(entry, this.decode(body)) : undefined;
    }
    if (coding === 'gzip') return entry.coding === 'gzip' ? entry.body : undefined;
    return entry.br;
  }

  /** `entry` in `coding`, made if need be (decoded, or compressed once and kept). */
  async bytesOf(entry: CacheEntry, coding: Coding): Promise<Buffer> {
    const at = this.ready(entry, coding);
    if (at) return at;
    if (coding !== 'identity') {
      const made = this.decoded?.get(this.madeKey(entry, coding));
      if (made) return made;
    }
    const identity = entry.coding ? this.keep(entry, await this.decodeAsync(entry.body)) : entry.body;
    if (coding === 'identity') return identity;
    const made = await this.answerBytes(identity, coding);
    this.decoded?.set(this.madeKey(entry, coding), made);
    return made;
  }

  /** The LRU key of `entry` made in `coding`: negative, beside the decoded answers' (its id). */
  private madeKey(entry: CacheEntry, coding: Exclude<Coding, 'identity'>): number {
    return -(this.idOf(entry) * 2 + (coding === 'br' ? 1 : 0));
  }

  private idOf(entry: CacheEntry): number {
    let id = this.ids.get(entry);
    if (id === undefined) this.ids.set(entry, (id = this.nextId++));
    return id;
  }

  /** An answer (not stored, or stored without this coding) compressed for its one client. */
  async answerBytes(identity: Buffer, coding: Exclude<Coding, 'identity'>): Promise<Buffer> {
    const { body, cost } = await encodeMeasured(identity, coding);
    this.opts.metrics.compressed(cost, 'answer');
    return body;
  }

  /** The form an answer is stored in (codings.ts storedForm), counted. */
  async storedForm(identity: Buffer): Promise<StoredForm> {
    const { form, cost } = await storedForm(identity);
    if (cost) this.opts.metrics.compressed(cost, 'store');
    return form;
  }

  /**
   * Whether `entry`, stored as it is, is to get its gzip for this client: a miss is stored as the
   * answer is unless its client took the gzip (flow.ts fetchAndStore), and the gzip is made when
   * a client that prefers it to identity first finds the entry (gzipFirst), never for nobody.
   */
  gzipWanted(entry: CacheEntry, preference: readonly Coding[]): boolean {
    return !entry.coding && compressible(entry.body.length) && prefersGzipToIdentity(preference) && !this.gzipTried.has(entry);
  }

  /**
   * The entry under `key` in `tier` in its gzip form, made now and put in its place (store.ts
   * addGzip), for a client `gzipWanted` said takes it: the entry as it is when gzip does not pay
   * (codings.ts storedForm). Undefined for an answer too large to compress on this thread
   * (gzipFirstAsync then).
   */
  gzipFirst(tier: Tier, key: string, entry: CacheEntry): CacheEntry | undefined {
    const made = storedFormSync(entry.body);
    if (!made) return undefined;
    this.gzipTried.add(entry);
    return this.adoptGzip(tier, key, entry, made.form, made.cost);
  }

  /**
   * gzipFirst for answers of any size (large ones on libuv's thread pool). Marked tried before it
   * starts: the clients that find the entry while it is made get it as it is, rather than each
   * making it again (hits are never limited: one miss must not buy a compression per hit).
   */
  async gzipFirstAsync(tier: Tier, key: string, entry: CacheEntry): Promise<CacheEntry> {
    this.gzipTried.add(entry);
    const { form, cost } = await storedForm(entry.body);
    return this.adoptGzip(tier, key, entry, form, cost);
  }

  /**
   * `entry`, stored as it is, was found not worth its gzip when it was stored (its miss's client
   * took gzip, and gzip did not pay): no hit tries again.
   */
  gzipNotWorthIt(tier: Tier, key: string): void {
    // get, not peek: the view it keeps is the object every later hit finds (tier.ts keepView).
    const entry = this.opts.store.get(tier, key);
    if (entry && !entry.coding) this.gzipTried.add(entry);
  }

  private adoptGzip(tier: Tier, key: string, entry: CacheEntry, form: StoredForm, cost: CompressionCost | undefined): CacheEntry {
    if (cost) this.opts.metrics.compressed(cost, 'store');
    if (form.coding !== 'gzip') return entry;
    // A coded representation varies on Accept-Encoding, whatever the entry said (an entry kept
    // as it is because gzip did not pay when it was stored may not).
    const headers = varyOnAcceptEncoding(entry.headers);
    // The stored one when it takes the entry's place (br is counted on it); else this copy,
    // still what the client found (the key holds another entry by now: replaced, purged).
    if (this.opts.store.addGzip(tier, key, entry, form.body, headers)) return this.opts.store.get(tier, key) ?? entry;
    return { ...entryFields(entry), headers, body: form.body, coding: 'gzip', identityBytes: entry.body.length };
  }

  /**
   * A client that prefers br was served `entry` without it. Counted; true the
   * `brotliAfterHits`th time: the caller then has its br made (makeBrotli), charged to its
   * client. Two calls, so that a hit that asks for nothing builds nothing (a closure for the
   * charge made a context on every short-path hit).
   */
  wantBrotli(entry: CacheEntry): boolean {
    const after = this.opts.brotliAfterHits;
    if (after === 0 || entry.coding !== 'gzip' || entry.br) return false;
    const n = (this.wants.get(entry) ?? 0) + 1;
    this.wants.set(entry, n);
    // Past `after`: asked for already (made entries are replaced by one that has br).
    return n === after && (entry.identityBytes ?? 0) <= UPGRADE_MAX_BYTES;
  }

  /**
   * `entry`'s br made in the background, for the client whose hit completed its count
   * (wantBrotli), which pays: asked before any work whether it could pay what a br form may add
   * at most (one is kept only when UPGRADE_MIN_SAVING smaller than the gzip), charged what it
   * adds once made. Refused, or the queue full: asked for again after as many hits more.
   */
  makeBrotli(tier: Tier, key: string, entry: CacheEntry, charge: BrotliCharge): void {
    if (this.queue.length >= UPGRADE_QUEUE_MAX) {
      this.wants.set(entry, 0);
      this.opts.metrics.upgrade('dropped');
      return;
    }
    if (!charge.affords(Math.ceil(entry.body.length * (1 - UPGRADE_MIN_SAVING)))) {
      this.wants.set(entry, 0);
      this.opts.metrics.upgrade('client-budget');
      return;
    }
    this.queue.push({ tier, key, entry, charge });
    if (!this.upgrading) void this.drain();
  }

  /** Upgrades one after another: one thread-pool thread at most. */
  private async drain(): Promise<void> {
    this.upgrading = true;
    try {
      for (let next = this.queue.shift(); next; next = this.queue.shift()) await this.upgrade(next);
    } finally {
      this.upgrading = false;
    }
  }

  private async upgrade({ tier, key, entry, charge }: Upgrade): Promise<void> {
    try {
      // The entry may be gone already: nothing to make.
      if (this.opts.store.get(tier, key) !== entry) return this.opts.metrics.upgrade('gone');
      const gzip = entry.body;
      const identity = await this.decodeAsync(gzip);
      const { body: br, cost } = await encodeMeasured(identity, 'br', BR_UPGRADE_QUALITY);
      this.opts.metrics.compressed(cost, 'upgrade');
      if (br.length > gzip.length * (1 - UPGRADE_MIN_SAVING)) return this.opts.metrics.upgrade('not-smaller');
      if (this.opts.store.get(tier, key) !== entry) return this.opts.metrics.upgrade('gone');
      // Its client spent its budget meanwhile: asked for again after as many hits more.
      if (!charge.affords(br.length)) {
        this.wants.set(entry, 0);
        return this.opts.metrics.upgrade('client-budget');
      }
      // Charged once kept (nothing runs in between: what it affords now it is taken).
      if (!this.opts.store.addBrotli(tier, key, entry, br)) return this.opts.metrics.upgrade('gone');
      charge.take(br.length);
      this.opts.metrics.upgrade('made');
    } catch (err) {
      this.opts.metrics.upgrade('failed');
      this.opts.log.warn({ err: String(err) }, 'brotli upgrade failed');
    }
  }

  private keep(entry: CacheEntry, identity: Buffer): Buffer {
    this.decoded?.set(this.idOf(entry), identity);
    return identity;
  }

  private decode(gzip: Buffer): Buffer {
    const started = performance.now();
    const identity = gunzip(gzip);
    this.opts.metrics.decoded((performance.now() - started) / 1000);
    return identity;
  }

  private async decodeAsync(gzip: Buffer): Promise<Buffer> {
    if (gzip.length <= SYNC_DECODE_MAX) return this.decode(gzip);
    const started = performance.now();
    const identity = await gunzipAsync(gzip);
    this.opts.metrics.decoded((performance.now() - started) / 1000);
    return identity;
  }
}
