/**
 * The shared tier's multi-key writes on a Redis Cluster, where one script may touch one slot only
 * (keys.ts names what lives together). On one Redis, entries.ts, invalidations.ts and purges.ts do
 * each of these in one script, atomically; here they are steps in an order that keeps the same
 * promise: no replica keeps an answer fetched before an invalidation of one of its tags.
 *
 *   store       1. SET the entry (its own slot), to live UNJOINED_PX at most
 *               2. then the entry joins its index sets (each a one-key script, any slot): after
 *                  the SET, so that a sweep that read a join's score finds the entry written (a
 *                  join and a SET sent together reach different masters in either order: a SET
 *                  delayed past a sweep's UNLINK left an entry the sweep had unindexed); when
 *                  any join fails, the entry is unlinked (failing that, a gap: below); joined,
 *                  its whole lifetime (PEXPIRE, with step 3): a process that dies between the
 *                  two steps leaves an entry no set names for UNJOINED_PX, not for its TTL
 *               3. GET vseq: unchanged since the fetch's mark, nothing was invalidated; else GET
 *                  the entry's guard tags (v:) and UNLINK the entry when one is above the mark
 *               (and its URL key joins the register prefix purges read, REGISTER_LUA)
 *   sweep       1. INCR vseq and SET the guard tags' v: to it (when the purge has guard tags)
 *               2. read every index set (part) with each member's score (MEMBERS_LUA), UNLINK
 *                  their entries, then take out each member whose score is still the one read
 *                  (UNJOIN_LUA)
 *
 * Why that is enough: a store whose step 3 read the tags before the sweep's step 1 wrote them did
 * its steps 1 and 2 before that too, so the sweep's read finds the entry and removes it; a
 * store whose step 3 came later sees the new number and removes its entry itself. A member is
 * taken out only when no store joined the set after the read: an entry's member is the same at
 * every store of its key, so a plain SREM of what was read also took out the membership of the
 * entry stored again meanwhile (a SADD of a member already there does nothing), leaving an entry
 * that no later purge or invalidation found, served to every replica until its TTL
 * (test/unit/redis-cluster-sweep-keeps-the-membership-of-an-entry-stored-meanwhile.test.ts).
 * Every join raises its member's score (JOIN_LUA), which the sweep's removal compares.
 *
 * Why a failed step 1 or 2 removes the entry: the sets live on other masters than the entry. A
 * join refused by a dying master beside a SET taken by a healthy one left an entry that no purge,
 * logout or invalidation could find, served to every replica until its TTL
 * (test/in-process/redis-cluster-store-cut-short-by-a-master-crash-leaves-no-entry.test.ts). When
 * even the UNLINK fails, the entry may stay where nothing names it: `onUnindexed` records a gap
 * (nothing stored before now is vouched for: cluster-watch.ts), as for a master that lost its
 * sets. A join acknowledged and then lost (a master restarting empty, a failover before
 * replication) is ClusterWatch's to notice.
 *
 * Commands of one step go out together (the cluster client pipelines them per node).
 */
import type { Redis } from 'ioredis';
import type { RedisKeys } from './keys.js';
import { INDEX_SHARDS, shardOf } from './keys.js';

/** How many entries one step of a sweep removes at once. */
const BATCH = 500;

/** How long an entry lives until it has joined its index sets (store, step 1). */
const UNJOINED_PX = 10_000;

/**
 * How long after its entry's end a member stays in a cluster's index set (JOIN_LUA): more than
 * the masters' clocks may disagree by (NTP keeps them within milliseconds; a minute leaves room
 * for a master whose clock was never set).
 */
export const ENDED_KEPT_MS = 60_000;

// KEYS[1] an index set, KEYS[2] its members scored by when their entry ends (keys.ts endsOf: the
// same slot); ARGV[1] the member, ARGV[2] px, ARGV[3] how long after its end a member is kept,
// ARGV[4] how many ended members leave at most. Both live as long as their longest-lived member.
// The entry lives on another master, so whether it still exists cannot be asked here (one slot
// per script); when it ends can: this master's clock (TIME; scripts replicate by their effects
// from Redis 7) plus its px, the later of each store's. A member leaves once that end is
// ARGV[3] past, so masters' clocks that disagree by less never unindex a live entry; a set that
// every store joins (a module's, the '*' tag's) stays about as large as its live entries.
// Every join raises the score, by a millisecond at least: a sweep that read the member before
// this join sees a score it did not read, and leaves the member in (UNJOIN_LUA).
const JOIN_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local px = tonumber(ARGV[2])
redis.call('SADD', KEYS[1], ARGV[1])
local score = now + px
local was = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '')
if was and was >= score then score = was + 1 end
redis.call('ZADD', KEYS[2], score, ARGV[1])
local ended = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, tonumber(ARGV[4]))
if #ended > 0 then
  redis.call('SREM', KEYS[1], unpack(ended))
  redis.call('ZREM', KEYS[2], unpack(ended))
end
for _, k in ipairs(KEYS) do
  if redis.call('PTTL', k) < px then redis.call('PEXPIRE', k, px) end
end
return #ended`;

// KEYS[1] an index set, KEYS[2] its ends (JOIN_LUA): every member, each followed by its score
// ('' when it has none), read at once. ZMSCORE in runs of 1,000 members: Lua's unpack takes a
// bounded number of values.
const MEMBERS_LUA = `
local members = redis.call('SMEMBERS', KEYS[1])
local out = {}
for i = 1, #members, 1000 do
  local run = {}
  for j = i, math.min(i + 999, #members) do run[#run + 1] = members[j] end
  local scores = redis.call('ZMSCORE', KEYS[2], unpack(run))
  for j = 1, #run do
    out[#out + 1] = run[j]
    out[#out + 1] = scores[j] or ''
  end
end
return out`;

// KEYS[1] an index set, KEYS[2] its ends; ARGV pairs of a member and the score MEMBERS_LUA read.
// Each member still at that score leaves both: one that a store joined since keeps its place.
const UNJOIN_LUA = `
local removed = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[2], ARGV[i]) or ''
  if score == ARGV[i + 1] then
    removed = removed + redis.call('SREM', KEYS[1], ARGV[i])
    redis.call('ZREM', KEYS[2], ARGV[i])
  end
end
return removed`;

// KEYS[1] an entry; ARGV[1] the head of the payload a store wrote (entry-codec.ts: its magic,
// version, tier, status, storedAt and ttlMs), ARGV[2] px. The entry's whole lifetime, given only
// to the value this store wrote: another replica's store of the same key meanwhile keeps its own.
const EXTEND_LUA = `
if redis.call('GETRANGE', KEYS[1], 0, #ARGV[1] - 1) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;

/** Bytes of an encoded entry's head (entry-codec.ts: "WE", version, tier, status u16, storedAt f64, ttlMs u32). */
const ENTRY_HEAD_BYTES = 18;

/** How many ended members leave an index set at each store that joins it (as STORE_LUA's PRUNE_PER_SET on one Redis, and one more). */
const PRUNE_PER_JOIN = 4;

// KEYS[1] a part of the URL register (URL keys, all scores 0: read by range), KEYS[2] the same
// URL keys scored by when their longest-lived entry ends; ARGV[1] the URL key, ARGV[2] its
// entry's px, ARGV[3] how long after its end a URL key is kept. That end is this master's clock
// (TIME) plus px, as JOIN_LUA's: a replica's clock, ahead of the one that stored, took URL keys
// out while their entries lived, and a prefix purge that reads the register never found them
// (test/in-process/redis-cluster-url-register-keeps-urls-whatever-the-replicas-clocks.test.ts).
// Up to 16 URL keys whose entries have all ended ARGV[3] ago leave both at each store, so the
// register stays about as large as what is stored.
const REGISTER_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ends = now + tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], 0, ARGV[1])
local was = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not was or tonumber(was) < ends then redis.call('ZADD', KEYS[2], ends, ARGV[1]) end
local ended = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]), 'LIMIT', 0, 16)
for _, u in ipairs(ended) do
  redis.call('ZREM', KEYS[1], u)
  redis.call('ZREM', KEYS[2], u)
end
return #ended`;

interface JoinScript {
  wikiedgeJoin(set: string, ends: string, member: string, px: number, keptMs: number, prune: number): Promise<number>;
  wikiedgeRegister(register: string, ends: string, urlKey: string, px: number, keptMs: number): Promise<number>;
  wikiedgeMembers(set: string, ends: string): Promise<string[]>;
  wikiedgeUnjoin(set: string, ends: string, ...memberScorePairs: string[]): Promise<number>;
  wikiedgeExtend(entry: string, head: Buffer, px: number): Promise<number>;
}

export interface ClusterStore {
  readonly entryKey: string;
  readonly payload: Buffer;
  readonly px: number;
  readonly member: string;
  readonly urlKey: string;
  readonly indexes: readonly string[];
  /** The v: keys of its guard tags (and of the flush); empty: unguarded. */
  readonly guards: readonly string[];
  readonly mark: number | undefined;
}

export class ClusterWrites {
  private readonly cmd: Redis & JoinScript;

  /**
   * `onUnindexed`: an entry may be left that no index set names (above); a gap is recorded.
   * `endedKeptMs`: how long after its entry's end a member stays in an index set (JOIN_LUA).
   */
  constructor(
    cmd: Redis,
    private readonly keys: RedisKeys,
    private readonly guardMs: number,
    private readonly onUnindexed: () => void = () => undefined,
    private readonly endedKeptMs = ENDED_KEPT_MS,
  ) {
    this.cmd = cmd as Redis & JoinScript;
    this.cmd.defineCommand('wikiedgeJoin', { lua: JOIN_LUA, numberOfKeys: 2 });
    this.cmd.defineCommand('wikiedgeRegister', { lua: REGISTER_LUA, numberOfKeys: 2 });
    this.cmd.defineCommand('wikiedgeMembers', { lua: MEMBERS_LUA, numberOfKeys: 2 });
    this.cmd.defineCommand('wikiedgeUnjoin', { lua: UNJOIN_LUA, numberOfKeys: 2 });
    this.cmd.defineCommand('wikiedgeExtend', { lua: EXTEND_LUA, numberOfKeys: 1 });
  }

  /** The index sets an entry joins on a cluster: a module's and a tag's in the part of its member. */
  indexSets(entry: { urlKey: string; slot: string | undefined; modules: readonly string[]; deps: readonly string[] }, member: string): string[] {
    const part = shardOf(member);
    const sets = [this.keys.url(entry.urlKey)];
    if (entry.slot !== undefined) sets.push(this.keys.slot(entry.slot));
    for (const m of new Set(entry.modules)) sets.push(this.keys.modulePart(m, part));
    for (const tag of new Set(entry.deps)) sets.push(this.keys.depPart(tag, part));
    return sets;
  }

  /** The URL register's part of `urlKey` (prefix purges read it). */
  private register(urlKey: string): [string, string] {
    const part = shardOf(this.keys.member(urlKey));
    return [this.keys.urlRegister(part), this.keys.urlRegisterEnds(part)];
  }

  /** Steps 1 to 3 of a store (above), in three round trips; true when the entry stays. */
  async store(s: ClusterStore): Promise<boolean> {
    // A SET that fails may have been taken (its reply lost with its connection): unlinked below.
    const set = await Promise.allSettled([this.cmd.set(s.entryKey, s.payload, 'PX', Math.min(s.px, UNJOINED_PX))]);
    const written =
      set[0]!.status === 'rejected'
        ? set
        : await Promise.allSettled([
            ...s.indexes.map((index) => this.cmd.wikiedgeJoin(index, this.keys.endsOf(index), s.member, s.px, this.endedKeptMs, PRUNE_PER_JOIN)),
            this.cmd.wikiedgeRegister(...this.register(s.urlKey), s.urlKey, s.px, this.endedKeptMs),
          ]);
    const failed = written.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // The SET may have been taken (even a failed one: the reply lost with its connection)
      // while a set did not take the entry: it goes. A replica that read it meanwhile keeps a
      // copy the purge messages still reach (each local tier indexes its own entries).
      await this.cmd.unlink(s.entryKey).catch(() => this.onUnindexed());
      throw failed.reason;
    }
    // Joined: its whole lifetime, sent beside step 3. Failing, it only ends early (a later miss).
    if (s.px > UNJOINED_PX) void this.cmd.wikiedgeExtend(s.entryKey, s.payload.subarray(0, ENTRY_HEAD_BYTES), s.px).catch(() => undefined);
    if (s.mark === undefined) return true;
    let vouched: boolean;
    try {
      const seq = Number((await this.cmd.get(this.keys.invalidationSeq)) ?? 0);
      if (seq === s.mark) return true;
      // A sequence below the mark went back: the master of the global keys restarted empty, and
      // the invalidations since are numbered from 0 again, below the mark. Nothing vouches.
      const numbers = seq < s.mark ? undefined : await Promise.all(s.guards.map((k) => this.cmd.get(k)));
      vouched = numbers !== undefined && numbers.every((v) => v === null || Number(v) <= s.mark!);
    } catch (err) {
      // Step 3 could not be made: the entry is written but not vouched for (a sweep may have read
      // its index sets before step 2), so it goes, or a gap is recorded.
      await this.cmd.unlink(s.entryKey).catch(() => this.onUnindexed());
      throw err;
    }
    if (vouched) return true;
    // Invalidated since the fetch began; an UNLINK that fails leaves it in Redis, indexed but
    // maybe after the sweep read its sets: a gap.
    await this.cmd.unlink(s.entryKey).catch(() => this.onUnindexed());
    return false;
  }

  /** Steps 1 and 2 of a sweep (above): the entries removed. */
  async sweep(sets: readonly string[], guards: readonly string[]): Promise<number> {
    if (guards.length > 0) {
      const seq = await this.cmd.incr(this.keys.invalidationSeq);
      await Promise.all(guards.map((k) => this.cmd.set(k, seq, 'PX', this.guardMs)));
    }
    // Each set's members, each followed by its score as read.
    const read = await Promise.all(sets.map((k) => this.cmd.wikiedgeMembers(k, this.keys.endsOf(k))));
    const members = [...new Set(read.flatMap((pairs) => pairs.filter((_, i) => i % 2 === 0)))];
    let removed = 0;
    for (let i = 0; i < members.length; i += BATCH) {
      const gone = await Promise.all(members.slice(i, i + BATCH).map((m) => this.cmd.unlink(this.keys.entryOf(m))));
      removed += gone.reduce((a, b) => a + b, 0);
    }
    await Promise.all(
      sets.flatMap((k, i) => {
        const pairs = read[i]!;
        const calls: Promise<number>[] = [];
        for (let j = 0; j < pairs.length; j += 2 * BATCH) calls.push(this.cmd.wikiedgeUnjoin(k, this.keys.endsOf(k), ...pairs.slice(j, j + 2 * BATCH)));
        return calls;
      }),
    );
    return removed;
  }

  /** Every part of a tag's index. */
  depParts(tag: string): string[] {
    return Array.from({ length: INDEX_SHARDS }, (_, n) => this.keys.depPart(tag, n));
  }

  /** Every part of a module's index. */
  moduleParts(module: string): string[] {
    return Array.from({ length: INDEX_SHARDS }, (_, n) => this.keys.modulePart(module, n));
  }

  /**
   * The URL keys stored that start with `prefix` and that `keep` names, read from the register by
   * range (no SCAN). They stay in it: a purge that fails part-way finds them again when it is
   * retried, and a URL stored again meanwhile is not forgotten; REGISTER_LUA drops each once its
   * entries have ended.
   */
  async urlsWithPrefix(prefix: string, keep: (urlKey: string) => boolean = () => true): Promise<string[]> {
    const parts = Array.from({ length: INDEX_SHARDS }, (_, n) => this.keys.urlRegister(n));
    // Every member has score 0, so the set is ordered by its bytes; URL keys are ASCII, and
    // U+00FF encodes as C3 BF, above any of them.
    const ranges = await Promise.all(parts.map((k) => this.cmd.zrangebylex(k, `[${prefix}`, `[${prefix}\u00ff`)));
    return ranges.flatMap((urls) => urls.filter(keep));
  }

  /**
   * Every key of this prefix on every master (a purge of everything, an admin request): SCAN on
   * each, then UNLINK one key at a time (a key per slot). The entries removed.
   */
  async removeAll(cluster: { nodes(role: 'master'): Redis[] }, match: string): Promise<number> {
    let removed = 0;
    for (const node of cluster.nodes('master')) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        await Promise.all(keys.map((k) => this.cmd.unlink(k)));
        removed += keys.filter((k) => k.startsWith(this.keys.entryPrefix)).length;
      } while (cursor !== '0');
    }
    return removed;
  }
}
