/**
 * The Redis tier's key names: pure, no I/O. Owned here so entries, locks and purges name the same
 * key the same way (P = WIKIEDGE_REDIS_KEY_PREFIX, default `wikiedge:`):
 *
 *   P e:<sha256(cache key)>     the encoded entry (entries.ts)
 *   P l:<sha256(cache key)>     the fetch lock (locks.ts)
 *   P u:<url key>               set of entry hashes of that URL (every variant), for PURGE and
 *                               (by SCAN MATCH) for prefix purges (purges.ts)
 *   P s:<sha256(session slot)>  set of entry hashes of that session, for logout evictions
 *   P m:<sha256(module)>        set of entry hashes by module, for module purges
 *   P d:<sha256(tag)>           set of entry hashes that depend on a tag (invalidations.ts)
 *   P v:<sha256(tag)>           the sequence number of the tag's last invalidation (store guard)
 *   P vseq                      the invalidation sequence
 *   P us:<sha256(user)>         set of the slots of a user's sessions (earlier versions: of
 *                               their index keys, P s:…)
 *   P su:<sha256(slot)>         the user a session belongs to (its writes end the user's other
 *                               sessions' entries: steps/session-lifecycle.ts)
 *   P stale-before              ms: entries stored before it are not vouched for (a gap)
 *   P rc-cursor / P rc-lease    the change follower's cursor and its one-follower lease
 *   P purge                     the purge channel
 *
 * Cache keys already hold an HMAC of the session's credentials, never a raw cookie; they are
 * hashed once more so key lengths are bounded.
 */
import { createHash } from 'node:crypto';

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Escape Redis glob metacharacters (SCAN MATCH). */
export function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}

/** Redis key names for a prefix; pure, for tests. */
export function redisKeys(prefix: string) {
  return {
    entry: (key: string) => `${prefix}e:${sha256(key)}`,
    member: (key: string) => sha256(key),
    lock: (key: string) => `${prefix}l:${sha256(key)}`,
    url: (urlKey: string) => `${prefix}u:${urlKey}`,
    slot: (slot: string) => `${prefix}s:${sha256(slot)}`,
    /** A session index key (P s:<64 hex>), as lists of a user's sessions held them before slots. */
    isSlotIndex: (member: string) => member.length === prefix.length + 66 && member.startsWith(`${prefix}s:`),
    module: (module: string) => `${prefix}m:${sha256(module)}`,
    dep: (tag: string) => `${prefix}d:${sha256(tag)}`,
    invalidatedAt: (tag: string) => `${prefix}v:${sha256(tag)}`,
    invalidationSeq: `${prefix}vseq`,
    userSessions: (user: string) => `${prefix}us:${sha256(user)}`,
    sessionUser: (slot: string) => `${prefix}su:${sha256(slot)}`,
    staleBefore: `${prefix}stale-before`,
    rcCursor: `${prefix}rc-cursor`,
    rcLease: `${prefix}rc-lease`,
    entryPrefix: `${prefix}e:`,
    channel: `${prefix}purge`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
