/**
 * What one client may cost: its budget of uncached requests (ClientBudget, what costs the wiki
 * PHP time) and its budget of bytes stored in the shared tier (StoreBudget, what costs every
 * other client the entries it pushes out), each a token bucket per client on TokenBuckets,
 * keyed as client-key.ts keys a client.
 *
 * A budget of uncached requests per client (misses and passes: what costs the wiki PHP time), as
 * nginx's `limit_req` and Wikimedia's request controls keep one: a token bucket per client
 * address, refilled at `ratePerSecond` up to `burst`. Hits, coalesced and stale answers cost
 * nothing: a cache-busting flood (a random parameter on every request) spends its own budget and
 * then gets 429 with Retry-After, while its hits and everyone else go on.
 *
 * Only a client asking in parallel is refused (`inParallel`: another of its uncached requests is
 * under way, UncachedUnderWay). MediaWiki's API etiquette asks bots to "make your requests in
 * series rather than in parallel" and sets them no rate: a client that waits for each answer
 * before its next request holds at most one of the wiki's workers, whatever its speed. Refused,
 * such clients failed where the wiki served them: mwclient and nodemw, which do not retry a 429,
 * failed after 90 and 220 reads with the default budget of 20 a second (test/integration/
 * clients-in-series-are-not-rate-limited.test.ts). Its requests still spend tokens while there are some.
 *
 * Bounded: at most `maxClients` buckets, the least recently charged forgotten first (a forgotten
 * client starts again with a full bucket, which is what a new client gets anyway).
 */
import { groupAddress } from './client-key.js';
export interface BudgetOptions {
  /** Tokens (uncached requests) per second; 0 turns the budget off. */
  readonly ratePerSecond: number;
  /** Bucket size: how many uncached requests a client may make at once after a quiet spell. */
  readonly burst: number;
  readonly maxClients: number;
}

export type Charge = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

export interface Bucket {
  /** May be below 0: a store larger than what was left is paid back before the next (StoreBudget below). */
  tokens: number;
  /** ms, when `tokens` was last brought up to date. */
  at: number;
}

const OK: Charge = Object.freeze({ ok: true });

export class ClientBudget {
  private readonly buckets: TokenBuckets;

  constructor(private readonly opts: BudgetOptions) {
    this.buckets = new TokenBuckets(opts);
  }

  get enabled(): boolean {
    return this.opts.ratePerSecond > 0;
  }

  /** Take one token for `client` at `now` (ms), or, `inParallel`, say how long until one is there. */
  charge(client: string, now: number, inParallel = true): Charge {
    if (!this.enabled) return OK;
    const bucket = this.buckets.take(client, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return OK;
    }
    return inParallel ? this.refusal(bucket.tokens) : OK;
  }

  /**
   * Would `charge` refuse `client` at `now`? Takes nothing and changes nothing: the flow asks
   * before it takes a lock or leads a fetch, so a spent client never holds either.
   */
  peek(client: string, now: number, inParallel = true): Charge {
    if (!this.enabled || !inParallel) return OK;
    const tokens = this.buckets.peek(client, now);
    return tokens >= 1 ? OK : this.refusal(tokens);
  }

  /** Retry-After: when the next whole token will be there (RFC 9110 §10.2.3, seconds, at least 1). */
  private refusal(tokens: number): Charge {
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.opts.ratePerSecond)) };
  }

  get size(): number {
    return this.buckets.size;
  }
}

/**
 * A token bucket per client, refilled at `ratePerSecond` up to `burst`, and bounded: at most
 * `maxClients` buckets, the least recently charged forgotten first (a forgotten client starts
 * again with a full bucket, which is what a new client gets anyway). What a token is worth is
 * its user's: an uncached request (ClientBudget above), a byte stored (StoreBudget below).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly opts: BudgetOptions) {}

  /** `client`'s bucket brought up to `now` (ms), to be charged: it becomes the most recently charged. */
  take(client: string, now: number): Bucket {
    let bucket = this.buckets.get(client);
    if (bucket) {
      // Most recently charged last: Map order is the eviction order.
      this.buckets.delete(client);
      bucket.tokens = this.tokensAt(bucket, now);
      bucket.at = now;
    } else {
      bucket = { tokens: this.opts.burst, at: now };
      if (this.buckets.size >= this.opts.maxClients) this.buckets.delete(this.buckets.keys().next().value as string);
    }
    this.buckets.set(client, bucket);
    return bucket;
  }

  /** `client`'s tokens at `now`, changing nothing (a client without a bucket has a full one). */
  peek(client: string, now: number): number {
    const bucket = this.buckets.get(client);
    return bucket ? this.tokensAt(bucket, now) : this.opts.burst;
  }

  /** The bucket refilled up to `now`. */
  private tokensAt(bucket: Bucket, now: number): number {
    return Math.min(this.opts.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.opts.ratePerSecond);
  }

  get size(): number {
    return this.buckets.size;
  }
}

/**
 * Each client's uncached requests under way (admission.ts: from the flow's first look at its
 * budget until its answer has ended and its turn at the wiki is released), and the clients that
 * lately left one before its answer. Holds only clients with a request under way, and at most
 * `maxAbandoned` of the others.
 */
export class UncachedUnderWay {
  private readonly counts = new Map<string, number>();
  /** Client → until when (ms) it counts as asking in parallel, least recently set first. */
  private readonly abandonedUntil = new Map<string, number>();

  constructor(private readonly opts: { readonly abandonedForMs: number; readonly maxAbandoned: number } = { abandonedForMs: 10_000, maxAbandoned: 100_000 }) {}

  enter(client: string): void {
    this.counts.set(client, (this.counts.get(client) ?? 0) + 1);
  }

  leave(client: string): void {
    const n = (this.counts.get(client) ?? 0) - 1;
    if (n > 0) this.counts.set(client, n);
    else this.counts.delete(client);
  }

  /** How many of `client`'s uncached requests are under way. */
  of(client: string): number {
    return this.counts.get(client) ?? 0;
  }

  /** `client` left an uncached request before its answer at `now`. */
  abandon(client: string, now: number): void {
    this.abandonedUntil.delete(client);
    if (this.abandonedUntil.size >= this.opts.maxAbandoned) this.abandonedUntil.delete(this.abandonedUntil.keys().next().value as string);
    this.abandonedUntil.set(client, now + this.opts.abandonedForMs);
  }

  /** Whether `client` left one within the last abandonedForMs. */
  abandoned(client: string, now: number): boolean {
    const until = this.abandonedUntil.get(client);
    if (until === undefined) return false;
    if (until > now) return true;
    this.abandonedUntil.delete(client);
    return false;
  }

  get clients(): number {
    return this.counts.size;
  }
}

/*
 * The budget of the bytes each client's misses may store in a tier: a token bucket in
 * bytes per client (keyed as client-key.ts keys the budget of uncached requests), refilled at
 * `bytesPerSecond` up to `burstBytes`.
 *
 * The shared tier is an LRU (cache/tier.ts): every entry stored pushes out the entries least
 * recently read. The budget of uncached requests (ClientBudget above) never refuses a client asking
 * in series, so without this one client sending cache-busting requests one after another, for
 * public answers up to WIKIEDGE_CACHE_MAX_ENTRY_BYTES, turns the whole tier over in
 * WIKIEDGE_CACHE_SHARED_MAX_BYTES / WIKIEDGE_CACHE_MAX_ENTRY_BYTES requests (256 with the
 * defaults), and every warm entry not read meanwhile is gone
 * (test/in-process/attack-one-client-flushes-the-cache.test.ts). The series exemption is about
 * answering (one request at a time holds one of the wiki's workers); storing is another cost,
 * borne by every other client, so a client past this budget is still answered, and its answer
 * is not stored.
 *
 * A client's own misses are charged, and the grace refreshes its hits start (steps/flow.ts
 * refreshInBackground: its budget must take the entry before it leads one). A session
 * holder's answers go to the per-session tier (WIKIEDGE_CACHE_SESSION_MAX_BYTES), which cannot
 * evict a shared entry (test/unit/attack-cache-exhaustion.test.ts) but is an LRU of its own,
 * shared by every session: a client sending a made-up session cookie each time (any cookie the
 * credential net takes, which the wiki ignores) had every answer stored as a new session's, and
 * pushed every user's private entries out (and filled Redis, which holds them too). That tier has
 * a budget of its own. A user's sessions are charged to the user (an account costs one); a
 * session whose user the gateway has not learned (client-key.ts unknownSession: any made-up
 * cookie) to itself and to its address's unknown sessions together, which store as one client
 * does, an IPv6 address's /48 as CLIENTS_PER_IPV6_48 do:
 * test/in-process/attack-made-up-sessions-flush-the-session-tier.test.ts.
 */

export interface StoreBudgetOptions {
  /** Bytes per second a client's misses may store; 0 turns the budget off. */
  readonly bytesPerSecond: number;
  /** Bucket size: the bytes a client may store at once after a quiet spell. */
  readonly burstBytes: number;
  readonly maxClients: number;
  /** Whether a group (an address's unknown sessions, client-key.ts ClientKey.group) stores as one client does; else no group budget. */
  readonly groups?: true;
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
  private readonly groups: TokenBuckets | undefined;

  constructor(private readonly opts: StoreBudgetOptions) {
    this.groups = opts.groups && new TokenBuckets({ ratePerSecond: opts.bytesPerSecond, burst: opts.burstBytes, maxClients: opts.maxClients });
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
   * `group` (an address's unknown sessions, `g:` and the address) is charged too, when the
   * budget has groups, and an IPv6 one's /48 then.
   */
  take(client: string, bytes: number, now: number, group?: string): boolean {
    if (!this.enabled) return true;
    // Brought up to now and made the most recently charged, whether or not they take it.
    const bucket = this.buckets.take(client, now);
    const groupBucket = group && this.groups ? this.groups.take(group, now) : undefined;
    const networkKey = this.networkOf(client, group);
    const network = networkKey === undefined ? undefined : this.networks.take(networkKey, now);
    if (!this.affords(client, bytes, now, group)) return false;
    bucket.tokens -= bytes;
    if (groupBucket) groupBucket.tokens -= bytes;
    if (network) network.tokens -= bytes;
    return true;
  }

  /** Whether take() would take `bytes` for `client` at `now`, changing nothing. */
  affords(client: string, bytes: number, now: number, group?: string): boolean {
    if (!this.enabled) return true;
    const burst = this.opts.burstBytes;
    if (!takes(this.buckets.peek(client, now), bytes, burst)) return false;
    if (group && this.groups && !takes(this.groups.peek(group, now), bytes, burst)) return false;
    const networkKey = this.networkOf(client, group);
    return networkKey === undefined || takes(this.networks.peek(networkKey, now), bytes, burst * CLIENTS_PER_IPV6_48);
  }

  /** The IPv6 /48 charged with `client` (its group's address when the budget has groups), if it is one. */
  private networkOf(client: string, group: string | undefined): string | undefined {
    return ipv6NetworkOf(group && this.groups ? groupAddress(group) : client);
  }

  get size(): number {
    return this.buckets.size;
  }
}

/** Whether a bucket of `tokens` takes `bytes`: it holds them, or it is full (a full bucket takes any one entry, going into debt). */
function takes(tokens: number, bytes: number, full: number): boolean {
  return tokens >= bytes || tokens >= full;
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
  return tierBudget(config.clientStoreBytesPerSecond, config.cacheSharedMaxBytes, config.cacheMaxEntryBytes);
}

/**
 * The session tier's budget, by the same rule over its own size (`auto`); the sessions of one
 * address whose users the gateway does not know store together as one client does: however many
 * sessions it makes up, an address turns over at most a tenth of the tier a minute.
 */
export function sessionStoreBudgetOptions(config: {
  readonly clientStoreBytesPerSecond: number | 'auto';
  readonly cacheSessionMaxBytes: number;
  readonly cacheMaxEntryBytes: number;
}): StoreBudgetOptions {
  return { ...tierBudget(config.clientStoreBytesPerSecond, config.cacheSessionMaxBytes, config.cacheMaxEntryBytes), groups: true };
}

function tierBudget(rate: number | 'auto', tierBytes: number, maxEntryBytes: number): StoreBudgetOptions {
  return {
    bytesPerSecond: rate === 'auto' ? Math.max(1, Math.floor(tierBytes / TURNOVER_SECONDS)) : rate,
    burstBytes: Math.max(1, Math.min(BURST_ENTRIES * maxEntryBytes, Math.floor(tierBytes / 8))),
    maxClients: 100_000,
  };
}
