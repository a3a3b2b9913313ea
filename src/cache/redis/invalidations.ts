/**
 * Invalidation in the Redis tier (the change signals of src/invalidation/): every entry that
 * depends on a tag is found through its dependency index set, without KEYS, and removed in one
 * script call; the tag's invalidation is numbered so that an answer fetched before it is not
 * written after it by any replica.
 *
 *   P d:<sha256(tag)>    the entries that depend on the tag (entries.ts joins them)
 *   P vseq               the invalidation sequence (INCR per invalidation)
 *   P v:<sha256(tag)>    the sequence number of the tag's last invalidation, kept GUARD_MS;
 *                        P v:<sha256(*flush*)> for a gap or a purge of everything
 *   P us:<sha256(user)>  the slots of a user's sessions, learned from userinfo and login
 *                        answers (policy/session-users.ts); lists written by earlier
 *                        versions hold their index sets' names (P s:…) instead
 *   P stale-before       entries stored before this instant (ms) are not vouched for
 *
 * Why a sequence rather than the clock: replicas' clocks differ, Redis' counter is one. A fetch
 * notes `vseq` before it asks the wiki (mark); entries.ts's store script refuses the entry if
 * one of its tags' `v:` is above the mark.
 */
import { MAX_SESSIONS_PER_USER } from '../../policy/session-users.js';
import type { RedisConnection } from './connection.js';
import { FLUSH_TAG, type RedisKeys } from './keys.js';
import { ClusterWrites } from './cluster-writes.js';

/**
 * The most entries one purge or invalidation script (here and purges.ts) removes per call: a set
 * of millions (a module every answer names) is emptied over several calls, none of which holds
 * Redis for long (a script blocks every other client while it runs:
 * https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).
 */
export const PURGE_BATCH = 1_000;
/** How long a tag's invalidation number is kept: far longer than any fetch. */
export const GUARD_MS = 10 * 60_000;
/** A user's session list lives this long after its last session was seen. */
const USER_SESSIONS_MS = 24 * 3600_000;
export { FLUSH_TAG };

// The one sweep of index sets, for invalidations by tag and for purges (purges.ts).
// KEYS[1] vseq, KEYS[2 .. 1 + ARGV[2]] the guards (v: keys) to record, then the index sets;
// ARGV[1] entry key prefix, ARGV[2] how many guards (0 after the first call), ARGV[3]
// GUARD_MS, ARGV[4] how many entries at most (PURGE_BATCH). Numbers the change and records it
// in every guard, then pops the sets' members and unlinks their entries; returns { removed, 1
// when members may be left }, called again (without the guards, recorded once) until none: an
// entry stored between two calls was fetched after the guard, and removing it too is harmless.
const SWEEP_LUA = `
local nguards = tonumber(ARGV[2])
if nguards > 0 then
  local seq = redis.call('INCR', KEYS[1])
  for i = 2, 1 + nguards do redis.call('SET', KEYS[i], seq, 'PX', ARGV[3]) end
end
local budget = tonumber(ARGV[4])
local n = 0
for i = 2 + nguards, #KEYS do
  while budget > 0 do
    local members = redis.call('SPOP', KEYS[i], budget)
    if #members == 0 then break end
    for _, m in ipairs(members) do n = n + redis.call('UNLINK', ARGV[1] .. m) end
    budget = budget - #members
  end
  if budget == 0 then return { n, 1 } end
end
return { n, 0 }`;

// KEYS[1] stale-before, KEYS[2] vseq, KEYS[3] the flush tag's v: key; ARGV[1] the instant, ARGV[2] GUARD_MS.
// A mark that is no number (set by hand, or by another program under the prefix) reads as none:
// the gap writes its number over it (test/in-process/redis-stale-before-that-is-no-number.test.ts).
const EXPIRE_LUA = `
local raw = redis.call('GET', KEYS[1])
local was = 0
if raw and #raw <= 15 and string.match(raw, '^%d+$') then was = tonumber(raw) end
if tonumber(ARGV[1]) > was then redis.call('SET', KEYS[1], ARGV[1]) end
local seq = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[3], seq, 'PX', ARGV[2])
return 0`;

// KEYS[1] the user's session list (us:), KEYS[2] the session's user (su:; absent on a cluster,
// where it is in another slot and set apart); ARGV[1] the slot,
// ARGV[2] the user, ARGV[3] the most slots kept, ARGV[4] PX. A list past its bound loses members
// at random (a set keeps no order), never the slot just seen.
const NOTE_SESSION_LUA = `
redis.call('SADD', KEYS[1], ARGV[1])
local over = redis.call('SCARD', KEYS[1]) - tonumber(ARGV[3])
if over > 0 then
  redis.call('SPOP', KEYS[1], over + 1)
  redis.call('SADD', KEYS[1], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if KEYS[2] then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4]) end
return 0`;

interface Scripts {
  wikiedgeSweep(numKeys: number, ...args: string[]): Promise<[number, number]>;
  wikiedgeExpire(staleBefore: string, seq: string, flushGuard: string, before: number, guardMs: number): Promise<number>;
  wikiedgeNoteSession(numKeys: number, ...args: (string | number)[]): Promise<number>;
  wikiedgeNoteSessionList(list: string, slot: string, user: string, max: number, px: number): Promise<number>;
}

/** On a cluster, how many tags one step of an invalidation sweeps (cluster-writes.ts sweep). */
export const TAGS_PER_SWEEP = 100;

export class RedisInvalidations {
  private readonly cmd: RedisConnection['cmd'] & Scripts;
  /** On a Redis Cluster: invalidations in steps (cluster-writes.ts) instead of SWEEP_LUA. */
  private readonly clustered: ClusterWrites | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly purgeTimeoutMs: number,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & Scripts;
    this.cmd.defineCommand('wikiedgeSweep', { lua: SWEEP_LUA });
    // The scripts a cluster runs take their keys first (numberOfKeys): ioredis' cluster
    // auto-pipelining groups a call by its first argument's slot (lib/autoPipelining.ts
    // getFirstValueInFlattenedArray), and a leading key count put it in slot("1")'s pipeline,
    // which then failed whole ("All keys in the pipeline should belong to the same slots
    // allocation group") and marked the tier down: test/integration/redis-replicas.test.ts on a
    // Redis Cluster, its per-session case.
    this.cmd.defineCommand('wikiedgeExpire', { lua: EXPIRE_LUA, numberOfKeys: 3 });
    this.cmd.defineCommand('wikiedgeNoteSession', { lua: NOTE_SESSION_LUA });
    this.cmd.defineCommand('wikiedgeNoteSessionList', { lua: NOTE_SESSION_LUA, numberOfKeys: 1 });
    this.clustered = keys.cluster ? new ClusterWrites(connection.cmd, keys, GUARD_MS) : undefined;
  }

  /** Remove every entry that depends on one of `tags`; the number removed, or null (some may have been removed). */
  async invalidate(tags: readonly string[]): Promise<number | null> {
    const writes = this.clustered;
    if (writes) {
      // A follower's batch names thousands of tags, each INDEX_SHARDS sets to read: swept
      // TAGS_PER_SWEEP at a time, each step within the purge's bound, so that a large batch is
      // not refused whole at every retry (an owed purge is retried as it is: tiered-storage.ts).
      let removed = 0;
      for (let i = 0; i < tags.length; i += TAGS_PER_SWEEP) {
        const chunk = tags.slice(i, i + TAGS_PER_SWEEP);
        const sets = chunk.flatMap((tag) => writes.depParts(tag));
        const guards = chunk.map((tag) => this.keys.invalidatedAt(tag));
        const r = await this.connection.call('purge', () => writes.sweep(sets, guards), { timeoutMs: this.purgeTimeoutMs });
        if (!r.ok) return null;
        removed += r.value;
      }
      return removed;
    }
    return this.sweep(
      tags.map((tag) => this.keys.invalidatedAt(tag)),
      tags.map((tag) => this.keys.dep(tag)),
    );
  }

  /**
   * One Redis (a cluster sweeps in steps: cluster-writes.ts): the guards' change numbered and
   * recorded, then the index sets' entries removed, PURGE_BATCH per script call (the guards in
   * the first only). The number removed, or null when Redis could not be reached.
   */
  async sweep(guards: readonly string[], indexKeys: readonly string[], timeoutMs = this.purgeTimeoutMs): Promise<number | null> {
    let removed = 0;
    for (let first = true; ; first = false) {
      const g = first ? guards : [];
      const r = await this.connection.call(
        'purge',
        () =>
          this.cmd.wikiedgeSweep(
            1 + g.length + indexKeys.length,
            this.keys.invalidationSeq,
            ...g,
            ...indexKeys,
            this.keys.entryPrefix,
            String(g.length),
            String(GUARD_MS),
            String(PURGE_BATCH),
          ),
        { timeoutMs },
      );
      if (!r.ok) return null;
      removed += Number(r.value[0]);
      if (Number(r.value[1]) === 0) return removed;
    }
  }

  /**
   * The sessions Redis knows to be a user's: their slots (which every replica's local tier
   * indexes by, purges.ts) and, from lists an earlier version wrote, index set names; null when
   * Redis could not be asked.
   */
  async userSessions(user: string, timeoutMs = this.purgeTimeoutMs): Promise<{ slots: string[]; indexKeys: string[] } | null> {
    const r = await this.connection.call('get', () => this.cmd.smembers(this.keys.userSessions(user)), { timeoutMs });
    if (!r.ok) return null;
    const slots: string[] = [];
    const indexKeys: string[] = [];
    for (const member of r.value) (this.keys.isSlotIndex(member) ? indexKeys : slots).push(member);
    return { slots, indexKeys };
  }

  /** Nothing stored before `before` is vouched for any more; racing writes are refused. */
  async expire(before: number): Promise<boolean> {
    const r = await this.connection.call('purge', () =>
      this.cmd.wikiedgeExpire(this.keys.staleBefore, this.keys.invalidationSeq, this.keys.invalidatedAt(FLUSH_TAG), before, GUARD_MS),
    );
    return r.ok;
  }

  /**
   * The instant before which nothing is vouched for (0 when none), or undefined when unknown.
   * Read off the client path (stale-before.ts, each time the tier comes up): bounded like a purge
   * by default, so that one slow reply on a busy host does not leave it unknown.
   */
  async staleBefore(timeoutMs = this.purgeTimeoutMs): Promise<number | undefined> {
    const r = await this.connection.call('get', () => this.cmd.get(this.keys.staleBefore), { timeoutMs });
    if (!r.ok) return undefined;
    // Only ever written as whole milliseconds (EXPIRE_LUA), 15 digits at most: anything else
    // (`NaN`, `inf`, 309 digits that overflow to Infinity, an empty string, which Number()
    // reads as 0) is no mark, NaN, which the tier reads as a gap now.
    if (r.value === null || r.value === undefined) return 0;
    return /^\d{1,15}$/.test(r.value) ? Number(r.value) : NaN;
  }

  /** The current invalidation number: noted before a fetch (the store guard), or undefined. */
  async mark(): Promise<number | undefined> {
    if (!this.connection.up) return undefined;
    const r = await this.connection.call('get', () => this.cmd.get(this.keys.invalidationSeq));
    return r.ok ? Number(r.value ?? 0) : undefined;
  }

  /** Remember that a session belongs to a user (fire and forget: bounded, never awaited by a client). */
  async noteSession(user: string, slot: string): Promise<void> {
    if (!this.connection.up) return;
    const [list, owner] = [this.keys.userSessions(user), this.keys.sessionUser(slot)];
    // On a cluster the two keys are in two slots: the list by script, the session's user apart.
    await this.connection.call('set', () =>
      this.keys.cluster
        ? Promise.all([
            this.cmd.wikiedgeNoteSessionList(list, slot, user, MAX_SESSIONS_PER_USER, USER_SESSIONS_MS),
            this.cmd.set(owner, user, 'PX', USER_SESSIONS_MS),
          ]).then(() => 0)
        : this.cmd.wikiedgeNoteSession(2, list, owner, slot, user, MAX_SESSIONS_PER_USER, USER_SESSIONS_MS),
    );
  }

  /** The user a session belongs to, as some replica learned it (noteSession); undefined when unknown or unreachable. */
  async sessionUser(slot: string): Promise<string | undefined> {
    if (!this.connection.up) return undefined;
    const r = await this.connection.call('get', () => this.cmd.get(this.keys.sessionUser(slot)));
    return r.ok ? (r.value ?? undefined) : undefined;
  }
}
