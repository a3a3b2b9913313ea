/**
 * A cached answer as every tier and the Redis codec see it. The store keeps its own compact copy
 * (a record in its tier's table, tier.ts; read out as a StoredEntry); this is the shape handed in and read out.
 */
export interface CacheEntry {
  readonly status: number;
  /** Headers replayed on a hit, precomputed at store time (never Set-Cookie, never Age). */
  readonly headers: Readonly<Record<string, string | string[]>>;
  /**
   * Once stored, a new view into the tier's slabs (slab-arena.ts) at every read; the arena may
   * move the bytes to another slab: read it when writing the answer, not before. Any view read
   * stays valid.
   */
  readonly body: Buffer;
  /**
   * `gzip` when `body` is the answer compressed at store (src/http/codings.ts), absent
   * when it is the answer as it is. Clients that take neither gzip nor br get it decoded.
   */
  readonly coding?: 'gzip';
  /** With `coding`: the answer's own length (Content-Length of an identity HEAD, the ratio metric). */
  readonly identityBytes?: number;
  /**
   * With `coding`: the answer in br too, when br clients asked for the entry often enough for it
   * to be made (src/compression/representations.ts). The same rules as `body` apply.
   */
  readonly br?: Buffer;
  readonly storedAt: number;
  readonly ttlMs: number;
  readonly urlKey: string;
  readonly modules: readonly string[];
  /** The session slot for per-session entries (logout eviction). */
  readonly slot: string | undefined;
  /** What the answer depends on (policy/dependencies.ts): tags a change invalidates. */
  readonly deps: readonly string[];
  /** The answer carries the wiki's clock (policy/dependencies.ts): never served in grace (freshness.ts). */
  readonly clock?: true | undefined;
}

/**
 * What an entry is besides its body and its stored forms, copied field by field (a StoredEntry's
 * body and br are getters: spread, it has none): kept as it is when a form is added
 * (tier.ts addGzip, addBrotli).
 */
export function entryFields(entry: CacheEntry): Omit<CacheEntry, 'body' | 'coding' | 'identityBytes' | 'br'> {
  return {
    status: entry.status,
    headers: entry.headers,
    storedAt: entry.storedAt,
    ttlMs: entry.ttlMs,
    urlKey: entry.urlKey,
    modules: entry.modules,
    slot: entry.slot,
    deps: entry.deps,
    clock: entry.clock,
  };
}
