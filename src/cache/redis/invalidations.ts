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

// KEYS[1] vseq, then per tag: its v: key and its d: set; ARGV[1] entry key prefix, ARGV[2]
// GUARD_MS, ARGV[3] '1' to number the invalidation and record it for every tag (the first call
// only), ARGV[4] how many entries at most (PURGE_BATCH). Pops the sets' members and
// unlinks their entries; returns { removed, 1 when members may be left }, called again until none.
const INVALIDATE_LUA = `
if ARGV[3] == '1' then
  local seq = redis.call('INCR', KEYS[1])
  for i = 2, #KEYS, 2 do redis.call('SET', KEYS[i], seq, 'PX', ARGV[2]) end
end
local budget = tonumber(ARGV[4])
local n = 0
for i = 3, #KEYS, 2 do
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
const EXPIRE_LUA = `
local was = tonumber(redis.call('GET', KEYS[1]) or '0')
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
  wikiedgeInvalidate(numKeys: number, ...args: (string | number)[]): Promise<[number, number]>;
  wikiedgeExpire(staleBefore: string, seq: string, flushGuard: string, before: number, guardMs: number): Promise<number>;
  wikiedgeNoteSession(numKeys: number, ...args: (string | number)[]): Promise<number>;
  wikiedgeNoteSessionList(list: string, slot: string, user: string, max: number, px: number): Promise<number>;
}

export class RedisInvalidations {
  private readonly cmd: RedisConnection['cmd'] & Scripts;
  /** On a Redis Cluster: invalidations in steps (cluster-writes.ts) instead of INVALIDATE_LUA. */
  private readonly clustered: ClusterWrites | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly purgeTimeoutMs: number,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & Scripts;
    this.cmd.defineCommand('wikiedgeInvalidate', { lua: INVALIDATE_LUA });
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

  /** Remove every entry that depends on one of `tags`; the number removed, or null. */
  async invalidate(tags: readonly string[]): Promise<number | null> {
    const writes = this.clustered;
    if (writes) {
      const sets = tags.flatMap((tag) => writes.depParts(tag));
      const guards = tags.map((tag) => this.keys.invalidatedAt(tag));
      const r = await this.connection.call('purge', () => writes.sweep(sets, guards), { timeoutMs: this.purgeTimeoutMs });
      return r.ok ? r.value : null;
    }
    const keys: string[] = [this.keys.invalidationSeq];
    for (const tag of tags) keys.push(this.keys.invalidatedAt(tag), this.keys.dep(tag));
    let removed = 0;
    for (let first = true; ; first = false) {
      const number = first ? '1' : '0';
      const r = await this.connection.call(
        'purge',
        () => this.cmd.wikiedgeInvalidate(keys.length, ...keys, this.keys.entryPrefix, GUARD_MS, number, PURGE_BATCH),
        {
          timeoutMs: this.purgeTimeoutMs,
        },
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

  /** The instant before which nothing is vouched for (0 when none), or undefined when unknown. */
  async staleBefore(): Promise<number | undefined> {
    const r = await this.connection.call('get', () => this.cmd.get(this.keys.staleBefore));
    return r.ok ? Number(r.value ?? 0) : undefined;
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
