/**
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
export interface BudgetOptions {
  /** Tokens (uncached requests) per second; 0 turns the budget off. */
  readonly ratePerSecond: number;
  /** Bucket size: how many uncached requests a client may make at once after a quiet spell. */
  readonly burst: number;
  readonly maxClients: number;
}

export type Charge = { readonly ok: true } | { readonly ok: false; readonly retryAfterSeconds: number };

export interface Bucket {
  /** May be below 0: a store larger than what was left is paid back before the next (store-budget.ts). */
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
 * its user's: an uncached request (ClientBudget above), a byte stored (store-budget.ts).
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
