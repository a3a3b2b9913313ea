/**
 * A budget of the bytes each client's misses may store in the shared tier: a token bucket in
 * bytes per client (keyed as client-key.ts keys the budget of uncached requests), refilled at
 * `bytesPerSecond` up to `burstBytes`.
 *
 * The shared tier is an LRU (cache/tier.ts): every entry stored pushes out the entries least
 * recently read. The budget of uncached requests (client-budget.ts) never refuses a client asking
 * in series, so without this one client sending cache-busting requests one after another, for
 * public answers up to WIKIEDGE_CACHE_MAX_ENTRY_BYTES, turns the whole tier over in
 * WIKIEDGE_CACHE_SHARED_MAX_BYTES / WIKIEDGE_CACHE_MAX_ENTRY_BYTES requests (256 with the
 * defaults), and every warm entry not read meanwhile is gone
 * (test/in-process/attack-one-client-flushes-the-cache.test.ts). The series exemption is about
 * answering (one request at a time holds one of the wiki's workers); storing is another cost,
 * borne by every other client, so a client past this budget is still answered, and its answer
 * is not stored.
 *
 * Only a client's own misses are charged: a background refresh is for everyone, and a session
 * holder's answers go to the per-session tier (WIKIEDGE_CACHE_SESSION_MAX_BYTES), which cannot
 * evict a shared entry (test/unit/attack-cache-exhaustion.test.ts).
 */
import { TokenBuckets } from './client-budget.js';

export interface StoreBudgetOptions {
  /** Bytes per second a client's misses may store; 0 turns the budget off. */
  readonly bytesPerSecond: number;
  /** Bucket size: the bytes a client may store at once after a quiet spell. */
  readonly burstBytes: number;
  readonly maxClients: number;
}

/**
 * An IPv6 client is keyed by its /64 (client-key.ts addressKey), and a home is delegated a /56 or
 * a /48: 256 to 65,536 /64s, each with a full bucket, would store the whole tier many times over
 * at once. Its /48 is charged too, with the budget of this many clients.
 */
export const CLIENTS_PER_IPV6_48 = 4;

/** The /48 of a client keyed by its IPv6 /64 (`2001:db8:1:2::/64` → `2001:db8:1::/48`), else undefined. */
export function ipv6NetworkOf(client: string): string | undefined {
  if (!client.endsWith('::/64')) return undefined;
  const groups = client.slice(0, -'::/64'.length).split(':');
  return groups.length === 4 ? `${groups.slice(0, 3).join(':')}::/48` : undefined;
}

export class StoreBudget {
  private readonly buckets: TokenBuckets;
  private readonly networks: TokenBuckets;

  constructor(private readonly opts: StoreBudgetOptions) {
    this.buckets = new TokenBuckets({ ratePerSecond: opts.bytesPerSecond, burst: opts.burstBytes, maxClients: opts.maxClients });
    this.networks = new TokenBuckets({
      ratePerSecond: opts.bytesPerSecond * CLIENTS_PER_IPV6_48,
      burst: opts.burstBytes * CLIENTS_PER_IPV6_48,
      maxClients: opts.maxClients,
    });
  }

  get enabled(): boolean {
    return this.opts.bytesPerSecond > 0;
  }

  /**
   * May `client` store an entry of `bytes` at `now` (ms)? Yes takes them from its bucket. A full
   * bucket takes any one entry, even one above the burst (then in debt, paid back at the rate
   * before its next store): else an entry larger than the burst could never be stored by anyone.
   */
  take(client: string, bytes: number, now: number): boolean {
    if (!this.enabled) return true;
    const bucket = this.buckets.take(client, now);
    if (bucket.tokens < bytes && bucket.tokens < this.opts.burstBytes) return false;
    const networkKey = ipv6NetworkOf(client);
    if (networkKey !== undefined) {
      const network = this.networks.take(networkKey, now);
      if (network.tokens < bytes && network.tokens < this.opts.burstBytes * CLIENTS_PER_IPV6_48) return false;
      network.tokens -= bytes;
    }
    bucket.tokens -= bytes;
    return true;
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** What turns the whole default over at most once in this many seconds, at the rate alone (the burst aside). */
export const TURNOVER_SECONDS = 600;
/** The burst, in the largest entries: a few of them, at most 1/8 of the tier. */
export const BURST_ENTRIES = 4;

/**
 * The budget's options from the configuration. `auto` (the default): the shared tier's bytes /
 * TURNOVER_SECONDS a second, so that one client turns over at most a tenth of the tier a minute
 * (plus the burst): the entries it pushes out are those not read for minutes, which at the
 * default TTLs (WIKIEDGE_TTL_PUBLIC_SECONDS, 60) have mostly expired anyway. The burst is
 * BURST_ENTRIES of the largest entries, at most an eighth of the tier: an ordinary client
 * storing dozens of answers at once is never held back, and no client can empty a small tier in
 * one go.
 */
export function storeBudgetOptions(config: {
  readonly clientStoreBytesPerSecond: number | 'auto';
  readonly cacheSharedMaxBytes: number;
  readonly cacheMaxEntryBytes: number;
}): StoreBudgetOptions {
  const rate = config.clientStoreBytesPerSecond;
  return {
    bytesPerSecond: rate === 'auto' ? Math.max(1, Math.floor(config.cacheSharedMaxBytes / TURNOVER_SECONDS)) : rate,
    burstBytes: Math.max(1, Math.min(BURST_ENTRIES * config.cacheMaxEntryBytes, Math.floor(config.cacheSharedMaxBytes / 8))),
    maxClients: 100_000,
  };
}
