/**
 * The words the gateway's steps decide with, and say in X-Cache, logs and metric labels: closed
 * unions, as lru-cache keeps its status words (`'hit' | 'stale' | 'miss' | …`). A leaf: it
 * imports nothing, so every layer can use them and none has to reach up for them.
 */

/** What happened to a request; the same words in `X-Cache`, logs and metrics. */
export type Disposition = 'hit' | 'hit-shared' | 'stale' | 'coalesced' | 'miss' | 'pass' | 'bypass' | 'error' | 'purge';
export const DISPOSITIONS: readonly Disposition[] = ['hit', 'hit-shared', 'stale', 'coalesced', 'miss', 'pass', 'bypass', 'error', 'purge'];

/**
 * The dispositions of answers that came from the cache, not from a request of this one to the
 * wiki: the hit ratio's numerator (the dashboard's hit_dispositions constant and the
 * wikiedge:hit_ratio:rate5m recording rule list exactly these; a test holds them to it).
 * `coalesced` waited for an identical request's answer, `stale` was served past its TTL.
 */
export const HIT_DISPOSITIONS: readonly Disposition[] = ['hit', 'hit-shared', 'stale', 'coalesced'];

/** Where an entry lives: the shared (anonymous) tier, or a session's own. */
export type Tier = 'shared' | 'session';
export const TIERS: readonly Tier[] = ['shared', 'session'];

/**
 * The cache mode MediaWiki chose for this requester (ApiMain::setCacheMode), read back from its
 * headers; `unknown` when they say neither public nor private.
 */
export type CacheMode = 'public' | 'anon-public-user-private' | 'private' | 'unknown';
export const CACHE_MODES: readonly CacheMode[] = ['public', 'anon-public-user-private', 'private', 'unknown'];

/** Why a request goes to the wiki without a lookup. */
export type PassReason = 'method' | 'not-canonical-path' | 'ambiguous-query' | 'array-params' | 'request-body' | 'credentials-unclear' | 'module-rule';

/** Why an answer was not stored. */
export type NoStoreReason =
  | 'status'
  | 'api-error'
  | 'set-cookie'
  | 'no-store'
  | 'private-anonymous'
  | 'zero-ttl'
  | 'vary'
  | 'too-large'
  | 'debuginfo'
  | 'requester-address'
  | 'credential-echo'
  | 'client-cookies'
  | 'invalidated'
  | 'store-failed'
  | 'client-budget';

/** Why an entry left a tier. */
export type EvictionReason = 'size' | 'expired' | 'purge' | 'logout' | 'replaced' | 'invalidated';

/** An entry's age against its lifetimes (policy/freshness.ts). */
export type Freshness = 'fresh' | 'grace' | 'stale-if-error' | 'dead';

/**
 * Why nothing cached before an instant is vouched for any more: the change follower could not
 * vouch that it saw every change (invalidation/follower.ts), or `follower-off`, a gateway that
 * follows no changes took over from followers whose entries were kept under the followed TTL
 * (gateway/gateway.ts followerStopped, endFollowedTtlInRedis). Each is a gap, and a series of
 * wikiedge_change_follower_gaps_total from the start.
 */
export type GapReason = 'cursor-lost' | 'clock' | 'rc-purged' | 'behind' | 'stalled' | 'row-unreadable' | 'follower-off' | 'owed';
export const GAP_REASONS: readonly GapReason[] = ['cursor-lost', 'clock', 'rc-purged', 'behind', 'stalled', 'row-unreadable', 'follower-off', 'owed'];
