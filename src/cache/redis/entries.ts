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
import type { Tier } from '../../words/outcomes.js';
import type { RedisMetrics } from '../../observe/metrics.js';
import { decodeEntry, encodeEntry } from '../entry-codec.js';
import { type StaleWindows, remainingKeepMs } from '../../policy/freshness.js';
import type { CacheEntry } from '../store.js';
import type { RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';
import { FLUSH_TAG } from './keys.js';
import { ClusterWrites } from './cluster-writes.js';
import { GUARD_MS } from './invalidations.js';
import { guardTags } from '../guards.js';
import { mayLeaveTheProcess } from '../../policy/policy.js';
import { storeBytes } from './memory.js';

// KEYS[1] entry, KEYS[2 .. 1+nidx] index sets, KEYS[2+nidx ..] the v: keys of its guard tags (and of
// the flush) then vseq when guarded; ARGV[1] payload, ARGV[2] px, ARGV[3] member, ARGV[4] nidx, ARGV[5] the
// mark noted before the fetch ('' unguarded), ARGV[6] the entry key prefix. Returns 0 without
// writing when one of the entry's guard tags (its dependencies, its URL, session and modules:
// guards.ts) was invalidated or purged after the mark (invalidations.ts, purges.ts): the answer
// may predate the change; and when vseq is below the mark: Redis restarted empty since the fetch
// began, and the invalidations since are numbered from 0 again. An index set lives as long as its longest-lived member (PTTL is -1 for
// a set just made), and loses, at each store that joins it, those of PRUNE_PER_SET random members
// whose entry has ended: a set that every store joins (a module's, the `*` tag's) would otherwise
// keep every entry that ever joined it (redis-index-sets-stay-bounded.test.ts). With n members
// alive, about n/2 ended ones stay at most.
export const PRUNE_PER_SET = 3;
const STORE_LUA = `
local px = tonumber(ARGV[2])
local nidx = tonumber(ARGV[4])
if ARGV[5] ~= '' then
  local mark = tonumber(ARGV[5])
  if tonumber(redis.call('GET', KEYS[#KEYS]) or '0') < mark then return 0 end
  for i = 2 + nidx, #KEYS - 1 do
    local v = redis.call('GET', KEYS[i])
    if v and tonumber(v) > mark then return 0 end
  end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', px)
for i = 2, 1 + nidx do
  for _, m in ipairs(redis.call('SRANDMEMBER', KEYS[i], ${PRUNE_PER_SET})) do
    if m ~= ARGV[3] and redis.call('EXISTS', ARGV[6] .. m) == 0 then redis.call('SREM', KEYS[i], m) end
  end
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
  /** On a cluster: cluster-writes.ts ENDED_KEPT_MS, unless a test shortens it. */
  readonly endedKeptMs?: number | undefined;
  /** Redis' gap mark as this process knows it, undefined while unknown (stale-before.ts). */
  readonly staleBefore?: () => number | undefined;
}

export class RedisEntries {
  private readonly cmd: RedisConnection['cmd'] & StoreScript;
  /** On a Redis Cluster: the store in steps (cluster-writes.ts) instead of STORE_LUA. */
  private readonly clustered: ClusterWrites | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisEntriesOptions,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & StoreScript;
    this.cmd.defineCommand('wikiedgeStore', { lua: STORE_LUA });
    this.clustered = keys.cluster ? new ClusterWrites(connection.cmd, keys, GUARD_MS, () => connection.entryUnindexed(), opts.endedKeptMs) : undefined;
  }

  /**
   * The entry stored under `key` by any replica, or undefined (absent, Redis unusable, or not an
   * entry of `tier`). Concurrent lookups of one key share one GET, and the invalidation mark
   * noted before it was sent (cache/tiered-storage.ts readShared).
   *
   * None while Redis' gap mark (stale-before) is unknown here (stale-before.ts): an entry stored
   * before it would be judged fresh. Known, it has been applied to the local tier before
   * (cache/tiered-storage.ts onStaleBefore), whose freshness judges an entry stored before it
   * stale: refreshed at its use, still a fallback while the wiki fails.
   */
  async get(tier: Tier, key: string): Promise<CacheEntry | undefined> {
    if (!this.connection.up || (this.opts.staleBefore && this.opts.staleBefore() === undefined)) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const rk = this.keys.entry(key);
    const r = await this.connection.call('get', () => this.cmd.getBuffer(rk));
    if (!r.ok) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const entry = r.value === null ? undefined : decodeFor(tier, r.value);
    this.opts.metrics.lookup(entry ? 'hit' : 'miss');
    return entry;
  }

  /**
   * Every entry filed under a URL key (its index set, entries.ts's `u:` membership), at most
   * `limit` of them, with their encoded size: what GET /cache on the admin listener shows of the
   * shared tier. Undefined when Redis could not be asked. One GET per entry (no MGET: the entries
   * of one URL need not share a cluster slot).
   */
  async variants(urlKey: string, limit: number): Promise<{ readonly tier: Tier; readonly entry: CacheEntry; readonly bytes: number }[] | undefined> {
    if (!this.connection.up) return undefined;
    const members = await this.connection.call('get', () => this.cmd.smembers(this.keys.url(urlKey)));
    if (!members.ok) return undefined;
    const found = await Promise.all(members.value.slice(0, limit).map((m) => this.connection.call('get', () => this.cmd.getBuffer(this.keys.entryOf(m)))));
    const out: { tier: Tier; entry: CacheEntry; bytes: number }[] = [];
    for (const r of found) {
      if (!r.ok) return undefined;
      if (r.value === null) continue;
      try {
        const d = decodeEntry(r.value);
        out.push({ tier: d.tier, entry: d.entry, bytes: r.value.length });
      } catch {
        // Not an entry this version can read: not shown.
      }
    }
    return out;
  }

  /**
   * Write an entry (and its index memberships: URL, session, modules, dependency tags) for every
   * replica, unless one of its tags was invalidated after `mark` (the number noted before the
   * fetch; undefined: unguarded). Resolves when done, refused or given up.
   */
  async set(tier: Tier, key: string, entry: CacheEntry, mark?: number): Promise<boolean> {
    if (!this.connection.up || !mayLeaveTheProcess(entry)) return false;
    const px = remainingKeepMs(entry, this.opts.now(), this.opts.windows);
    if (px === 0) return false;
    let payload: Buffer;
    try {
      payload = encodeEntry(tier, entry);
    } catch {
      return false;
    }
    const guards = mark === undefined ? [] : [...new Set([...guardTags(entry), FLUSH_TAG])].map((tag) => this.keys.invalidatedAt(tag));
    // Not while Redis is near its maxmemory: noeviction would refuse the write, and the tier go
    // down (./memory.ts). The local tier keeps the entry.
    const joins = 1 + (entry.slot === undefined ? 0 : 1) + new Set(entry.modules).size + new Set(entry.deps).size;
    if (!this.connection.memory.admit(storeBytes(payload.length, joins))) return false;
    if (this.clustered) {
      const member = this.keys.member(key);
      const writes = this.clustered;
      const store = { entryKey: this.keys.entry(key), payload, px, member, urlKey: entry.urlKey, guards, mark };
      const r = await this.connection.call('set', () => writes.store({ ...store, indexes: writes.indexSets(entry, member) }));
      const kept = r.ok && r.value;
      if (kept) this.opts.metrics.stored.inc({ tier });
      return kept;
    }
    const indexes = [this.keys.url(entry.urlKey)];
    if (entry.slot !== undefined) indexes.push(this.keys.slot(entry.slot));
    for (const m of new Set(entry.modules)) indexes.push(this.keys.module(m));
    for (const tag of new Set(entry.deps)) indexes.push(this.keys.dep(tag));
    // Guarded: vseq last (STORE_LUA).
    const checked = mark === undefined ? guards : [...guards, this.keys.invalidationSeq];
    const r = await this.connection.call('set', () =>
      this.cmd.wikiedgeStore(
        1 + indexes.length + checked.length,
        this.keys.entry(key),
        ...indexes,
        ...checked,
        payload,
        px,
        this.keys.member(key),
        indexes.length,
        mark === undefined ? '' : String(mark),
        this.keys.entryPrefix,
      ),
    );
    const stored = r.ok && Number(r.value) === 1;
    if (stored) this.opts.metrics.stored.inc({ tier });
    return stored;
  }
}
