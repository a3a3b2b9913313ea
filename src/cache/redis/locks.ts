/**
 * The cross-replica fetch lock: at most one replica fetches a key from the wiki at a time, and
 * the others wait for its entry in Redis.
 *
 *   P l:<sha256(cache key)>   SET NX PX WIKIEDGE_REDIS_LOCK_MS, a random token; deleted by its
 *                             holder (only while the token is still its own), else it expires
 *
 * Every call goes through the connection's bounded `call` (connection.ts): when Redis fails or
 * is down, the lock is `unavailable` and a waiter's wait ends `unavailable`; the caller then
 * fetches by itself (src/api/flow.ts, fetchOnceAcrossReplicas).
 */
import { randomBytes } from 'node:crypto';
import type { Tier } from '../../outcomes.js';
import type { RedisMetrics, RedisWaitOutcome } from '../../metrics.js';
import type { CacheEntry } from '../store.js';
import { type RedisConnection, sleep } from './connection.js';
import { decodeFor } from './entries.js';
import type { RedisKeys } from './keys.js';

export type LockResult =
  | { readonly kind: 'won'; readonly token: string }
  | { readonly kind: 'lost' }
  | { readonly kind: 'unavailable' };

// Delete the lock only if it is still ours (it may have expired and been taken by another replica).
const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface UnlockScript {
  wikiedgeUnlock(lockKey: string, token: string): Promise<number>;
}

export interface RedisLocksOptions {
  readonly lockMs: number;
  readonly metrics: RedisMetrics;
}

export class RedisLocks {
  private readonly cmd: RedisConnection['cmd'] & UnlockScript;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisLocksOptions,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & UnlockScript;
    this.cmd.defineCommand('wikiedgeUnlock', { lua: UNLOCK_LUA, numberOfKeys: 1 });
  }

  /** Try to become the one replica that fetches `key` now. */
  async lock(key: string): Promise<LockResult> {
    if (!this.connection.up) {
      this.opts.metrics.lock('unavailable');
      return { kind: 'unavailable' };
    }
    const token = randomBytes(9).toString('base64url');
    const r = await this.connection.call('lock', () =>
      this.cmd.set(this.keys.lock(key), token, 'PX', this.opts.lockMs, 'NX'),
    );
    const result: LockResult = !r.ok ? { kind: 'unavailable' } : r.value === 'OK' ? { kind: 'won', token } : { kind: 'lost' };
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
