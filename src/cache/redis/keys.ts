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
 *   P replicas                  sorted set: the replicas alive (their random ids), scored by when
 *                               their heartbeat ends (purges.ts)
 *   P a:<purge id>              hash, short-lived: the replicas that applied an admin purge and
 *                               how many entries each removed (purges.ts)
 *
 * On a Redis Cluster (WIKIEDGE_REDIS_CLUSTER_NODES) the names carry hash tags
 * (https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags), so that
 * what one script or pipeline touches is in one slot and the rest spreads over every slot:
 *
 *   P e:{h} / P l:{h}           an entry and its lock, h = sha256(cache key): one slot per key
 *   P u:{sha256(url key)}       the URL's and the session's index sets, each with its members'
 *   P s:{sha256(slot)}          ends beside it in its slot (P …:ends, a sorted set: a member
 *                               leaves a minute after its entry ended: cluster-writes.ts JOIN_LUA)
 *   P d:{sha256(tag).n}         a tag's index, in INDEX_SHARDS parts by the member's hash, n the
 *   P m:{sha256(module).n}      part: a popular tag's or module's members spread over the masters
 *                               (each part with its :ends, as above)
 *   P r:{n}                     the URL keys stored (a sorted set per part, all scores 0), read
 *                               by range for prefix purges instead of SCAN; P x:{n} the same
 *                               keys scored by when their entries end, to forget them then
 *   P {g}vseq, P {g}stale-before, P {g}v:*flush*, P {g}rc-cursor, P {g}rc-lease, P {g}replicas
 *                               the few global keys, together (one slot: EXPIRE_LUA's three)
 *   P a:{id}                    an admin purge's acknowledgements: one slot per purge
 *   P purge                     the channel, sharded pub/sub (SPUBLISH/SSUBSCRIBE)
 *
 * The other keys (v:, us:, su:) are single-key objects in any slot.
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

/** The guard tag of a gap or a purge of everything (invalidations.ts). */
export const FLUSH_TAG = '*flush*';

/**
 * How many parts a tag's or a module's index set has on a cluster. Every store adds to one part
 * (by the member's hash), every invalidation of the tag reads all of them: 8 parts reach all of 3
 * masters for any tag (the chance that 8 random slots miss one of 3 equal masters is 3·(2/3)^8 ≈ 12%
 * per tag, of at most a third of its members), at 8 SMEMBERS per invalidated tag.
 */
export const INDEX_SHARDS = 8;

/** The part of an index set a member (an entry's hash, hex) belongs to. */
export const shardOf = (member: string): number => parseInt(member.slice(0, 4), 16) % INDEX_SHARDS;

/** Redis key names for a prefix; pure, for tests. `cluster`: the hash-tagged names above. */
export function redisKeys(prefix: string, cluster = false) {
  const g = cluster ? `${prefix}{g}` : prefix;
  const tagged = (kind: string, h: string) => (cluster ? `${prefix}${kind}:{${h}}` : `${prefix}${kind}:${h}`);
  return {
    cluster,
    entry: (key: string) => tagged('e', sha256(key)),
    /** The entry key of a member (an index set's element). */
    entryOf: (member: string) => tagged('e', member),
    member: (key: string) => sha256(key),
    lock: (key: string) => tagged('l', sha256(key)),
    // On a cluster the URL's set is named by the URL key's hash, so that its ends (endsOf) share its slot.
    url: (urlKey: string) => (cluster ? tagged('u', sha256(urlKey)) : `${prefix}u:${urlKey}`),
    slot: (slot: string) => tagged('s', sha256(slot)),
    /** A session index key (P s:<64 hex>), as lists of a user's sessions held them before slots. */
    isSlotIndex: (member: string) => member.length === prefix.length + 66 && member.startsWith(`${prefix}s:`),
    module: (module: string) => `${prefix}m:${sha256(module)}`,
    dep: (tag: string) => `${prefix}d:${sha256(tag)}`,
    /** On a cluster: the part of a module's or a tag's index set that `member` joins. */
    modulePart: (module: string, n: number) => tagged('m', `${sha256(module)}.${n}`),
    depPart: (tag: string, n: number) => tagged('d', `${sha256(tag)}.${n}`),
    /**
     * On a cluster: an index set's members scored by when their entries end, in the set's slot
     * (every cluster index set's name ends in its hash tag): cluster-writes.ts JOIN_LUA.
     */
    endsOf: (set: string) => `${set}:ends`,
    /** On a cluster: a part of the URL keys' register (prefix purges). */
    urlRegister: (n: number) => `${prefix}r:{${n}}`,
    /** The same URL keys, scored by when their entries end (cluster-writes.ts REGISTER_LUA). */
    urlRegisterEnds: (n: number) => `${prefix}x:{${n}}`,
    invalidatedAt: (tag: string) => (tag === FLUSH_TAG ? `${g}v:${sha256(tag)}` : `${prefix}v:${sha256(tag)}`),
    invalidationSeq: `${g}vseq`,
    userSessions: (user: string) => `${prefix}us:${sha256(user)}`,
    sessionUser: (slot: string) => `${prefix}su:${sha256(slot)}`,
    staleBefore: `${g}stale-before`,
    rcCursor: `${g}rc-cursor`,
    rcLease: `${g}rc-lease`,
    /** The replicas alive, scored by when their heartbeat ends (purges.ts ReplicaAcks). */
    replicas: `${g}replicas`,
    /** An admin purge's acknowledgements, by its id (purges.ts ReplicaAcks). */
    purgeAcks: (purgeId: string) => tagged('a', purgeId),
    entryPrefix: `${prefix}e:`,
    channel: `${prefix}purge`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;
