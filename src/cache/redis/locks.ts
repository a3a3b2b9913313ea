/**
 * The cross-replica fetch lock: at most one replica fetches a key from the wiki at a time, and
 * the others wait for its entry in Redis.
 *
 *   P l:<sha256(cache key)>   SET NX PX WIKIEDGE_REDIS_LOCK_MS, a random token, unless a fresh
 *                             entry is already there (LOCK_LUA); deleted by its holder (only
 *                             while the token is still its own), else it expires
 *
 * What it guarantees (src/cache/tiered-storage.ts fetchOnce, for src/steps/flow.ts fetchOnceAcrossReplicas): while every Redis call answers
 * within WIKIEDGE_REDIS_TIMEOUT_MS and a fetch takes less than the lock's lifetime, concurrent
 * identical misses on any number of replicas make one request to the wiki. The holder writes its
 * entry before it releases the lock, so a waiter that sees the lock gone sees the entry too, and
 * a replica that takes the lock after a fetch finished is told so (LOCK_LUA) instead of fetching
 * again. When a Redis call fails or times out, that replica's tier is down: it fetches by itself
 * (its in-process coalescing still holds for the requests that find its fetch under way), and
 * counts it in wikiedge_redis_errors_total{op} and as `unavailable` in
 * wikiedge_redis_locks_total or wikiedge_redis_lock_waits_total. Availability over
 * deduplication: a client never waits on a slow Redis.
 *
 * Every call goes through the connection's bounded `call` (connection.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Tier } from '../../words/outcomes.js';
import type { RedisMetrics, RedisWaitOutcome } from '../../observe/metrics.js';
import type { StaleWindows } from '../../policy/freshness.js';
import type { CacheEntry } from '../store.js';
import type { LockResult } from '../storage.js';
import { type RedisConnection, sleep } from './connection.js';
import { decodeFor } from './entries.js';
import type { RedisKeys } from './keys.js';

export type { LockResult } from '../storage.js';

// KEYS[1] the lock, KEYS[2] the entry; ARGV[1] token, ARGV[2] the lock's PX, ARGV[3] the entry
// PTTL above which the entry is still fresh for a while, ARGV[4] Redis' gap mark (stale-before,
// ms) as the caller knows it. Returns 1 won, 0 lost, 2 taken but given back at once: the entry
// is there and fresh, a fetch already finished.
// Why look at the entry: a replica's lookup (GET) and its lock (SET NX) are two steps. When its
// GET came before the holder's SET and its SET NX after the holder's unlock, a plain SET NX wins
// a lock whose fetch is done, and the wiki is asked again (seen under load: 2 replicas x 50
// misses, no Redis error, two locks won). Entries are written with PX = ttl - age + W, where
// W = max(grace, stale-if-error) (freshness.ts remainingKeepMs), so PTTL > W means fresh; a
// session's entry has no stale window (W = 0), so any PTTL left means fresh.
// Why the gap mark too: after a gap (stale-before), an entry stored before it keeps its PTTL yet
// is not fresh on any replica. Judged by its PTTL alone, it counted as a fetch already finished:
// every replica was given the lock back, found the entry stale, saw no lock and fetched
// (test/in-process/redis-lock-after-a-gap-still-deduplicates.test.ts). Its storedAt is read
// from the entry itself (entry-codec.ts: "WE", version, tier, status, then storedAt as a
// big-endian f64 at byte 6, in every version), so the lock and its entry stay the script's only
// keys, in one hash slot on a cluster (keys.ts). The caller passes the mark (it is another key,
// in another slot): while it does not know it, a mark no entry is stored at or after
// (stale-before.ts NOTHING_VOUCHED), and the lock is taken as a plain SET NX.
const LOCK_LUA = `
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 0 end
if redis.call('PTTL', KEYS[2]) > tonumber(ARGV[3]) then
  local head = redis.call('GETRANGE', KEYS[2], 0, 13)
  if #head == 14 and string.sub(head, 1, 2) == 'WE' and struct.unpack('>d', string.sub(head, 7, 14)) >= tonumber(ARGV[4]) then
    redis.call('DEL', KEYS[1])
    return 2
  end
end
return 1`;

/** A fresh entry counts as "already fetched" only if it stays fresh this long (the waiter's poll takes it). */
const FRESH_FOR_AT_LEAST_MS = 1_000;

// Delete the lock only if it is still ours (it may have expired and been taken by another replica).
const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface LockScripts {
  wikiedgeLock(lockKey: string, entryKey: string, token: string, lockMs: number, freshPttl: number, staleBefore: number): Promise<number>;
  wikiedgeUnlock(lockKey: string, token: string): Promise<number>;
}

export interface RedisLocksOptions {
  readonly lockMs: number;
  /** The stale windows entries are written with (entries.ts): tells a fresh entry by its PTTL. */
  readonly windows: StaleWindows;
  readonly metrics: RedisMetrics;
}

export class RedisLocks {
  private readonly cmd: RedisConnection['cmd'] & LockScripts;
  private readonly freshPttl: number;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisLocksOptions,
  ) {
    this.freshPttl = Math.max(opts.windows.graceMs, opts.windows.staleIfErrorMs) + FRESH_FOR_AT_LEAST_MS;
    this.cmd = connection.cmd as RedisConnection['cmd'] & LockScripts;
    this.cmd.defineCommand('wikiedgeLock', { lua: LOCK_LUA, numberOfKeys: 2 });
    this.cmd.defineCommand('wikiedgeUnlock', { lua: UNLOCK_LUA, numberOfKeys: 1 });
  }

  /**
   * Try to become the one replica that fetches `key` now. `lost` also when the lock was free but
   * a fresh entry is already there (a fetch finished since this replica looked): waitForEntry's
   * first poll then takes that entry, and a background refresh is left to the replica that made it.
   * An entry stored before `staleBefore` (Redis' gap mark, stale-before.ts) is not such an entry.
   */
  async lock(key: string, tier: Tier, staleBefore: number): Promise<LockResult> {
    if (!this.connection.up) {
      this.opts.metrics.lock('unavailable');
      return { kind: 'unavailable' };
    }
    const token = randomBytes(9).toString('base64url');
    const r = await this.connection.call('lock', () =>
      this.cmd.wikiedgeLock(
        this.keys.lock(key),
        this.keys.entry(key),
        token,
        this.opts.lockMs,
        tier === 'session' ? FRESH_FOR_AT_LEAST_MS : this.freshPttl,
        staleBefore,
      ),
    );
    const result: LockResult = !r.ok ? { kind: 'unavailable' } : r.value === 1 ? { kind: 'won', token } : { kind: 'lost' };
    this.opts.metrics.lock(result.kind);
    return result;
  }

  /** Release a lock we won (only if it is still ours). */
  async unlock(key: string, token: string): Promise<void> {
    // Down: the lock expires by itself (PX).
    await this.connection.call('unlock', () => this.cmd.wikiedgeUnlock(this.keys.lock(key), token));
  }

  /**
   * Having lost the lock: poll for the winner's entry, every 5 ms growing to 50 ms, for at most
   * `maxWaitMs` (and never past the lock's own lifetime). Each poll is one round trip: EXISTS
   * lock, then GET entry. Ends with the entry if `accept` takes it; `released` when the lock is
   * gone without an acceptable entry (the winner's answer was not storable, or it failed);
   * `timeout`; or `unavailable` when Redis fails.
   */
  async waitForEntry(
    tier: Tier,
    key: string,
    accept: (entry: CacheEntry) => boolean,
    maxWaitMs: number,
  ): Promise<{ outcome: RedisWaitOutcome; entry?: CacheEntry }> {
    const started = Date.now();
    const deadline = started + Math.min(maxWaitMs, this.opts.lockMs);
    const lockKey = this.keys.lock(key);
    const entryKey = this.keys.entry(key);
    let delay = 5;
    const end = (outcome: RedisWaitOutcome, entry?: CacheEntry) => {
      this.opts.metrics.wait(outcome);
      return entry ? { outcome, entry } : { outcome };
    };
    for (;;) {
      await sleep(Math.max(0, Math.min(delay, deadline - Date.now())));
      const r = await this.connection.call('poll', () => this.cmd.pipeline().exists(lockKey).getBuffer(entryKey).exec());
      if (!r.ok || !r.value) return end('unavailable');
      const [[lockErr, locked], [getErr, buf]] = r.value as [[Error | null, number], [Error | null, Buffer | null]];
      if (lockErr || getErr) {
        this.opts.metrics.error('poll');
        return end('unavailable');
      }
      const entry = buf ? decodeFor(tier, buf) : undefined;
      if (entry && accept(entry)) return end('entry', entry);
      if (locked === 0) return end('released');
      if (Date.now() >= deadline) return end('timeout');
      delay = Math.min(delay * 1.5, 50);
    }
  }
}
