/**
 * Freshness and lifetimes, as pure functions of an entry's own storedAt/ttlMs and the clock, so
 * the local tier, the Redis tier and every replica decide them the same way.
 *
 *   age < ttl                          fresh
 *   ttl ≤ age < ttl + grace            grace (served stale while one refresh runs)
 *                                      (never an answer that carries the wiki's clock: below)
 *   ttl ≤ age < ttl + staleIfError     stale-if-error (served only when the wiki fails, or the
 *                                      gateway refuses the request its turn)
 *   otherwise                          dead
 *
 * A shared entry is kept (locally and in Redis) until storedAt + ttl + max(grace, staleIfError).
 * A session's entry (its `slot`) is fresh or dead, and kept until storedAt + ttl: its TTL is what
 * bounds a logout or a password change the gateway did not see (made straight at the wiki, or
 * through a replica without Redis). Grace served the old cookie one more of the session's private
 * answers after it (test/unit/session-entry-never-served-past-its-ttl.test.ts), and stale-if-error up to 300 s more
 * whenever the gateway refused the request a turn, which its holder could bring about by keeping
 * another request open (test/in-process/attack-stale-session-by-own-refusal.test.ts).
 */
import type { Freshness } from '../words/outcomes.js';

export type { Freshness } from '../words/outcomes.js';

export interface StaleWindows {
  readonly graceMs: number;
  readonly staleIfErrorMs: number;
}

interface Timed {
  readonly storedAt: number;
  readonly ttlMs: number;
  /** A session's entry (its slot): no stale window (above). */
  readonly slot?: string | undefined;
  /**
   * The answer carries the wiki's clock (policy/dependencies.ts carriesClock): no grace window.
   * Its TTL is the clock cap (policy.ts dependencyVerdict) and bot frameworks read the wiki's time
   * from it; grace served it up to the cap plus the grace window old. Stale-if-error still does
   * when the wiki fails, with its true Age (not when the client's own budget is spent: flow.ts).
   */
  readonly clock?: boolean | undefined;
}

/**
 * `staleBefore` (ms): entries stored before it are not vouched for any more (a gap in the change
 * signals, invalidation/follower.ts): never fresh nor in grace, only a fallback when the wiki
 * fails, within their stale-if-error window.
 */
export function freshnessAt(entry: Timed, now: number, w: StaleWindows, staleBefore = 0): Freshness {
  // A replica whose clock is behind the writer's sees a negative age: fresh, never "older".
  const age = now - entry.storedAt;
  if (entry.slot !== undefined) return age < entry.ttlMs && entry.storedAt >= staleBefore ? 'fresh' : 'dead';
  if (entry.storedAt < staleBefore) return age < entry.ttlMs + w.staleIfErrorMs ? 'stale-if-error' : 'dead';
  if (age < entry.ttlMs) return 'fresh';
  if (!entry.clock && age < entry.ttlMs + w.graceMs) return 'grace';
  if (age < entry.ttlMs + w.staleIfErrorMs) return 'stale-if-error';
  return 'dead';
}

/** How long an entry is worth keeping at all, from its storedAt: TTL plus the longer stale window. */
export function keepMs(entry: Timed, w: StaleWindows): number {
  return entry.slot !== undefined ? entry.ttlMs : entry.ttlMs + Math.max(w.graceMs, w.staleIfErrorMs);
}

/**
 * Milliseconds left to keep `entry` as of `now` (a whole number ≥ 1), or 0 when it is no longer
 * worth keeping. Used for Redis' PX, so an entry written to Redis after a slow fetch expires at
 * the same instant as its local copy, and by the local store to refuse an entry already dead.
 */
export function remainingKeepMs(entry: Timed, now: number, w: StaleWindows): number {
  const left = entry.storedAt + keepMs(entry, w) - now;
  if (!(left > 0)) return 0;
  // Past the writer's clock (skew): never keep longer than the whole window.
  return Math.max(1, Math.ceil(Math.min(left, keepMs(entry, w))));
}

/** Whole seconds for the Age header (never negative: another replica's clock may be ahead). */
export function ageSeconds(entry: Timed, now: number): number {
  return Math.max(0, Math.floor((now - entry.storedAt) / 1000));
}

/**
 * Whether an entry from Redis replaces a local copy that is no longer fresh: only one stored
 * later, and not "in the future" (by a writer whose clock is ahead). The local copy of such an
 * entry counts from when it was copied (store.ts); comparing the entry's own storedAt again
 * would copy it anew, fresh again, each time that copy went stale.
 */
export function replacesLocal(remote: Timed, local: Timed, now: number): boolean {
  return remote.storedAt > local.storedAt && remote.storedAt <= now;
}
