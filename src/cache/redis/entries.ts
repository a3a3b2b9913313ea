/**
 * Entries in the Redis tier: reading one (concurrent lookups of a key share one GET) and writing
 * one with its index memberships, in one script call.
 *
 *   P e:<sha256(cache key)>   the encoded entry (entry-codec.ts), PX = what is left of
 *                             ttl + max(grace, stale-if-error) from the entry's storedAt
 *   P u: / P s: / P m:        the index sets it joins (keys.ts); purges.ts reads them. An index
 *                             set expires with its longest-lived member.
 *
 * Every call goes through the connection's bounded `call` (connection.ts); while the tier is
 * down, lookups are `unavailable` and writes are skipped.
 */
import type { Tier } from '../../outcomes.js';
import type { RedisMetrics } from '../../metrics.js';
import { decodeEntry, encodeEntry } from '../entry-codec.js';
import { type StaleWindows, remainingKeepMs } from '../freshness.js';
import type { CacheEntry } from '../store.js';
import type { Outcome, RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';

// KEYS[1] entry, KEYS[2..] index sets; ARGV[1] payload, ARGV[2] px, ARGV[3] member.
// An index set lives as long as its longest-lived member (PTTL is -1 for a set just made).
const STORE_LUA = `
local px = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', px)
for i = 2, #KEYS do
  redis.call('SADD', KEYS[i], ARGV[3])
  if redis.call('PTTL', KEYS[i]) < px then redis.call('PEXPIRE', KEYS[i], px) end
end
return 1`;

interface StoreScript {
  wikiedgeStore(numKeys: number, ...args: (string | Buffer | number)[]): Promise<number>;
}

/** An encoded entry of `tier`, or undefined (undecodable, or of the other tier). */
export function decodeFor(tier: Tier, buf: Buffer): CacheEntry | undefined {
  try {
    const d = decodeEntry(buf);
    // The key names the slot, so this cannot differ; checked anyway: never cross tiers.
    return d.tier === tier ? d.entry : undefined;
  } catch {
    return undefined;
  }
}

export interface RedisEntriesOptions {
  readonly windows: StaleWindows;
  readonly now: () => number;
  readonly metrics: RedisMetrics;
}

export class RedisEntries {
  private readonly cmd: RedisConnection['cmd'] & StoreScript;
  private readonly inflightGets = new Map<string, Promise<Outcome<Buffer | null>>>();

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisEntriesOptions,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & StoreScript;
    this.cmd.defineCommand('wikiedgeStore', { lua: STORE_LUA });
  }

  /**
   * The entry stored under `key` by any replica, or undefined (absent, Redis unusable, or not an
   * entry of `tier`). Concurrent lookups of one key share one GET.
   */
  async get(tier: Tier, key: string): Promise<CacheEntry | undefined> {
    if (!this.connection.up) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const rk = this.keys.entry(key);
    let p = this.inflightGets.get(rk);
    if (!p) {
      p = this.connection.call('get', () => this.cmd.getBuffer(rk)).finally(() => this.inflightGets.delete(rk));
      this.inflightGets.set(rk, p);
    }
    const r = await p;
    if (!r.ok) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const entry = r.value === null ? undefined : decodeFor(tier, r.value);
    this.opts.metrics.lookup(entry ? 'hit' : 'miss');
    return entry;
  }

  /** Write an entry (and its index memberships) for every replica. Resolves when done or given up. */
  async set(tier: Tier, key: string, entry: CacheEntry): Promise<boolean> {
    if (!this.connection.up) return false;
    const px = remainingKeepMs(entry, this.opts.now(), this.opts.windows);
    if (px === 0) return false;
    let payload: Buffer;
    try {
      payload = encodeEntry(tier, entry);
    } catch {
      return false;
    }
    const indexes = [this.keys.url(entry.urlKey)];
    if (entry.slot !== undefined) indexes.push(this.keys.slot(entry.slot));
    for (const m of new Set(entry.modules)) indexes.push(this.keys.module(m));
    const r = await this.connection.call('set', () =>
      this.cmd.wikiedgeStore(1 + indexes.length, this.keys.entry(key), ...indexes, payload, px, this.keys.member(key)),
    );
    if (r.ok) this.opts.metrics.stored.inc({ tier });
    return r.ok;
  }
}
