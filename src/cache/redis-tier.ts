/**
 * The optional second tier, shared by every replica through one Redis (WIKIEDGE_REDIS_URL): a
 * facade over its parts in ./redis/, one concern each:
 *
 *   redis/connection.ts  both connections, up/down, the PING probe, bounded calls (all share it)
 *   redis/keys.ts        key names (P = WIKIEDGE_REDIS_KEY_PREFIX): P e: entries, P l: locks,
 *                        P u:/s:/m: index sets, P purge the channel
 *   redis/entries.ts     entries (both tiers' keys, hashed) and their index memberships
 *   redis/memory.ts      every master's used_memory against its maxmemory: entry stores stop
 *                        short of it (noeviction would refuse them, and the tier go down)
 *   redis/locks.ts       the short fetch lock per key, and waiting for its holder's entry
 *   redis/purges.ts      purges through the index sets or SCAN, and the pub/sub channel that
 *                        carries them to every replica's local LRU
 *   redis/invalidations.ts  invalidation by dependency tag (index sets, numbered, with the store
 *                        guard), users' sessions, the gap's cutoff
 *   redis/follower-state.ts the change follower's cursor and one-follower lease
 *   redis/stale-before.ts the gap's cutoff as this process knows it: read each time the tier
 *                        comes up, and no Redis entry served until it is
 *
 * Faults: every call is bounded by `timeoutMs` (module, prefix and all purges, which are admin
 * requests, by max(1 s, 20 × timeoutMs)); the first failure marks the tier down (logged once)
 * and every later call returns at once without Redis, until the connection is ready again and a
 * PING answers (logged once).
 */
import type { Logger } from 'pino';
import type { RedisOptions, Redis } from 'ioredis';
import type { Tier } from '../words/outcomes.js';
import type { RedisMetrics, RedisWaitOutcome } from '../observe/metrics.js';
import type { StaleWindows } from '../policy/freshness.js';
import type { CacheEntry } from './store.js';
import { RedisConnection } from './redis/connection.js';
import type { RedisTarget } from './redis/target.js';
import { RedisEntries } from './redis/entries.js';
import { redisKeys } from './redis/keys.js';
import { type LockResult, RedisLocks } from './redis/locks.js';
import { type PurgeMessage, RedisPurges } from './redis/purges.js';
import { RedisInvalidations } from './redis/invalidations.js';
import { RedisFollowerState } from './redis/follower-state.js';
import { StaleBeforeMark } from './redis/stale-before.js';
import type { CountedAcks } from './storage.js';

export { globEscape, redisKeys, sha256 } from './redis/keys.js';
export type { LockResult } from './redis/locks.js';
export { parsePurgeMessage, type PurgeMessage } from './redis/purges.js';

export interface RedisTierOptions {
  readonly url: string;
  /** Where Redis is, when not simply `url` (Sentinels): redis/target.ts. */
  readonly target?: RedisTarget | undefined;
  readonly timeoutMs: number;
  readonly lockMs: number;
  readonly keyPrefix: string;
  readonly windows: StaleWindows;
  readonly now: () => number;
  readonly log: Logger;
  readonly metrics: RedisMetrics;
  /** Apply a purge (ours or another replica's) to the local tier; how many entries it removed. */
  readonly onPurge: (message: PurgeMessage) => number | void | Promise<number>;
  /** Purges may have been missed (the channel was lost and is back): redis/connection.ts. */
  readonly onPurgesMissed?: () => void;
  /** Redis' gap mark, read each time the tier comes up (redis/stale-before.ts): apply it as a gap here. */
  readonly onStaleBefore?: (at: number) => void;
  /** On a cluster: how long after its entry's end a member stays in an index set (cluster-writes.ts ENDED_KEPT_MS; tests shorten it). */
  readonly endedKeptMs?: number;
  /** Test hook: replace the client factory. */
  readonly connect?: (url: string, options: RedisOptions) => Redis;
}

export class RedisTier {
  private readonly connection: RedisConnection;
  private readonly entries: RedisEntries;
  private readonly locks: RedisLocks;
  private readonly purges: RedisPurges;
  private readonly invalidations: RedisInvalidations;
  private readonly follower: RedisFollowerState;
  private readonly staleBeforeMark: StaleBeforeMark;

  constructor(opts: RedisTierOptions) {
    const keys = redisKeys(opts.keyPrefix, opts.target?.kind === 'cluster');
    const { metrics, log } = opts;
    // A gap heard on the channel (or taken here) raises the mark this process knows (redis/stale-before.ts).
    const onPurge = (message: PurgeMessage) => {
      if (message.kind === 'expire') this.staleBeforeMark.heard(message.before);
      return opts.onPurge(message);
    };
    this.connection = new RedisConnection({
      url: opts.url,
      target: opts.target,
      timeoutMs: opts.timeoutMs,
      log,
      metrics,
      connect: opts.connect,
      onChannelResumed: opts.onPurgesMissed,
      // A cluster master lost index sets: the entries they named elude every purge, so nothing
      // stored before now is vouched for, here at once and on every replica through Redis. Here
      // once per loss, not at each retry: the local tier fills from the wiki while Redis is down.
      onDataLost: async (fresh) => {
        const gap = { kind: 'expire', before: opts.now() } as const;
        if (fresh) onPurge(gap);
        return (await this.purges.purge(gap)) !== null;
      },
    });
    this.entries = new RedisEntries(this.connection, keys, {
      windows: opts.windows,
      now: opts.now,
      metrics,
      endedKeptMs: opts.endedKeptMs,
      staleBefore: () => this.staleBeforeMark.known,
    });
    this.locks = new RedisLocks(this.connection, keys, { lockMs: opts.lockMs, windows: opts.windows, metrics });
    this.invalidations = new RedisInvalidations(this.connection, keys, Math.max(1_000, opts.timeoutMs * 20));
    // Registered on the connection before anything else that listens for it coming up.
    this.staleBeforeMark = new StaleBeforeMark(this.connection, {
      read: async () => {
        const at = await this.invalidations.staleBefore();
        if (at === undefined || Number.isFinite(at)) return at;
        // A mark that is no number (set by hand, or by another program under the prefix) read as
        // NaN, before which nothing ever is: every entry in Redis was vouched for. Unknown is no
        // better (no Redis entry served, for good): as after a gap now, and the next gap writes
        // a number over it (test/in-process/redis-stale-before-that-is-no-number.test.ts).
        log.error(
          { redisStaleBefore: 'not-a-number' },
          'the gap mark in redis (stale-before) is not a number: nothing stored in redis before now is vouched for',
        );
        return opts.now();
      },
      onLearned: opts.onStaleBefore,
      log,
    });
    this.purges = new RedisPurges(
      this.connection,
      keys,
      {
        keyPrefix: opts.keyPrefix,
        timeoutMs: opts.timeoutMs,
        log,
        metrics,
        onPurge,
        now: opts.now,
      },
      this.invalidations,
    );
    this.follower = new RedisFollowerState(this.connection, keys);
  }

  /** True while Redis is used on the request path. */
  get up(): boolean {
    return this.connection.up;
  }

  /**
   * Resolves when the tier is up and Redis' gap mark was read (or after `maxMs`, whichever is
   * first): used once at start. Up without the mark, Redis entries are not served until it is
   * read (redis/stale-before.ts).
   */
  async ready(maxMs: number): Promise<boolean> {
    const started = Date.now();
    const up = await this.connection.ready(maxMs);
    if (up) await this.staleBeforeMark.learned(maxMs - (Date.now() - started));
    return up;
  }

  /** The entry stored under `key` by any replica, or undefined (redis/entries.ts). */
  get(tier: Tier, key: string): Promise<CacheEntry | undefined> {
    return this.entries.get(tier, key);
  }

  /**
   * Write an entry (and its index memberships) for every replica, unless one of its tags was
   * invalidated after `mark` (redis/entries.ts).
   */
  set(tier: Tier, key: string, entry: CacheEntry, mark?: number): Promise<boolean> {
    return this.entries.set(tier, key, entry, mark);
  }

  /** The entries filed under a URL key, for inspection (redis/entries.ts variants). */
  variants(urlKey: string, limit: number): Promise<{ readonly tier: Tier; readonly entry: CacheEntry; readonly bytes: number }[] | undefined> {
    return this.entries.variants(urlKey, limit);
  }

  /** The invalidation number to note before a fetch (redis/invalidations.ts), undefined when unknown. */
  invalidationMark(): Promise<number | undefined> {
    return this.invalidations.mark();
  }

  /** The instant before which nothing is vouched for (a gap), undefined when unknown. */
  staleBefore(): Promise<number | undefined> {
    return this.invalidations.staleBefore();
  }

  /** Remember that a session belongs to a user (redis/invalidations.ts). */
  noteSession(user: string, slot: string): Promise<void> {
    return this.invalidations.noteSession(user, slot);
  }

  /** The user a session belongs to, as any replica learned it (redis/invalidations.ts). */
  sessionUser(slot: string): Promise<string | undefined> {
    return this.invalidations.sessionUser(slot);
  }

  /** The change follower's cursor and lease (redis/follower-state.ts). */
  get followerState(): RedisFollowerState {
    return this.follower;
  }

  /** Try to become the one replica that fetches `key` now (redis/locks.ts). */
  lock(key: string, tier: Tier): Promise<LockResult> {
    return this.locks.lock(key, tier, this.staleBeforeMark.lockCutoff);
  }

  /** Release a lock we won, only if it is still ours (redis/locks.ts). */
  unlock(key: string, token: string): Promise<void> {
    return this.locks.unlock(key, token);
  }

  /** Having lost the lock: wait for the winner's entry, bounded (redis/locks.ts). */
  waitForEntry(tier: Tier, key: string, accept: (entry: CacheEntry) => boolean, maxWaitMs: number): Promise<{ outcome: RedisWaitOutcome; entry?: CacheEntry }> {
    // None taken while Redis' gap mark is unknown: it may be one stored before it (redis/stale-before.ts).
    return this.locks.waitForEntry(tier, key, (entry) => this.staleBeforeMark.known !== undefined && accept(entry), maxWaitMs);
  }

  /** Purge Redis and every replica's local tier; null when Redis could not be reached (redis/purges.ts). */
  /** `onClientPath`: a client's answer waits for it: bounded by WIKIEDGE_REDIS_TIMEOUT_MS, as a session purge is. */
  purge(message: PurgeMessage, onClientPath = false): Promise<number | null> {
    return this.purges.purge(message, onClientPath);
  }

  /** An admin purge: purge(), and the other replicas' count of what they removed (redis/replica-acks.ts). */
  purgeCounted(message: PurgeMessage, onClientPath = false): Promise<{ removed: number | null; acks?: Promise<CountedAcks> }> {
    return this.purges.purgeCounted(message, onClientPath);
  }

  /** Leave the replicas alive, then close both connections (QUIT, bounded; then drop them). */
  async close(): Promise<void> {
    this.staleBeforeMark.close();
    await this.purges.close();
    return this.connection.close();
  }
}
