/**
 * Purges, in one place for both storages (cache/local-storage.ts, cache/tiered-storage.ts) and
 * so for PURGE, the admin listener and session evictions: the shared tier first (so a lookup
 * racing with the purge cannot refill this replica from it afterwards), then this replica's
 * local tier, while the message published on the shared tier's channel reaches the others (and
 * this one again: applying a purge twice is harmless). Without a shared tier, the sibling
 * workers of a cluster are told over IPC.
 */
import type { CacheStore } from './store.js';
import type { PurgeMessage } from '../words/purge-message.js';
import { matchesUrlPattern, urlPrefixMatcher } from './url-match.js';
import { userTag } from '../policy/dependencies.js';

export type { PurgeMessage } from '../words/purge-message.js';

export interface PurgeResult {
  /** Entries removed from this replica's local tier. */
  readonly purged: number;
  /**
   * Entries removed from the shared tier; null when it could not be reached; absent without one.
   * Named after Redis because PURGE and the admin listener answer with this object (README).
   */
  readonly redisPurged?: number | null;
  /**
   * An admin purge with a shared tier (PurgeOptions.countReplicas): what the other replicas
   * said they removed (cache/redis/replica-acks.ts); absent otherwise, or when the shared tier
   * could not carry the purge.
   */
  readonly replicas?: ReplicaCount;
}

/** The other replicas' answers to an admin purge, waited for a bounded time (cache/redis/replica-acks.ts). */
export interface ReplicaCount {
  /** Replicas that applied it and said how many entries they removed. */
  readonly answered: number;
  /** Replicas alive (a heartbeat in the shared tier) when it was published, this one left out. */
  readonly expected: number;
  /** Entries the replicas that answered removed from their local tiers. */
  readonly purged: number;
  /** The ids of the expected replicas that did not answer in time: their copies may remain. */
  readonly missing: readonly string[];
}

/** Which sessions belong to a user (policy/session-users.ts), for `user` purges. */
export interface UserSessions {
  slots(user: string): readonly string[];
  userOf(slot: string): string | undefined;
}

/** UserSessions, and learning one more pair (policy/session-users.ts SessionUsers). */
export interface SessionBook extends UserSessions {
  note(slot: string, user: string): void;
}

/** Apply a purge to a local tier. Returns how many entries it removed. */
export function applyLocalPurge(store: CacheStore, message: PurgeMessage, users?: UserSessions): number {
  switch (message.kind) {
    case 'url':
      return store.purgeUrl(message.urlKey);
    case 'slot': {
      let n = store.evictSession(message.slot);
      const user = message.wrote ? users?.userOf(message.slot) : undefined;
      if (user !== undefined) n += evictUser(store, user, users!.slots(user));
      return n;
    }
    case 'module':
      return store.purgeModule(message.module);
    case 'prefix': {
      const named = urlPrefixMatcher(message.prefix);
      return store.purgeWhere((e) => named(e.urlKey));
    }
    case 'pattern': {
      const pattern = message.pattern;
      return store.purgeWhere((e) => matchesUrlPattern(pattern, e.urlKey));
    }
    case 'all':
      return store.flushAll();
    case 'tags':
      return store.invalidate(message.tags);
    case 'user':
      return evictUser(store, message.user, [...(message.slots ?? []), ...(users?.slots(message.user) ?? [])]);
    case 'expire':
      store.expireBefore(message.before);
      return 0;
  }
}

/**
 * A user's answers: those stored while whose session it was was known (dependencies.ts userTag),
 * and every entry of the sessions known to be the user's (stored before that was learned).
 */
function evictUser(store: CacheStore, user: string, slots: readonly string[]): number {
  let n = store.evictUser(userTag(user));
  for (const slot of new Set(slots)) n += store.evictSession(slot);
  return n;
}

/**
 * The other processes of this replica (WIKIEDGE_WORKERS > 1), each with its own local tier.
 * With Redis they hear purges on its channel; without it, or while it cannot be reached, a
 * PURGE, a logout or a session holder's write must still reach them, or they would serve what
 * this one just dropped.
 */
export interface PurgeSiblings {
  publish(message: PurgeMessage): void;
  /**
   * publish(), settling once every sibling has applied it (or a bound has passed): for a purge
   * a client's answer waits for (a session holder's write), which must not find the other
   * workers still serving what it changed.
   */
  publishAndWait?(message: PurgeMessage): Promise<void>;
  /**
   * This process learned whose session `slot` is (steps/session-lifecycle.ts): its siblings must know
   * too, or a write taken by one of them would not reach that session's entries here.
   */
  sessionUser?(slot: string, user: string): void;
  /**
   * This process now keeps purges the shared tier could not take, or no longer does
   * (tiered-storage.ts): should it end owing them, they are carried as a gap by a sibling
   * (cluster/primary.ts), not lost with it.
   */
  owesPurges?(owes: boolean): void;
}

export async function purgeEverywhere(
  store: CacheStore,
  /** The shared tier (cache/storage.ts SharedTier): entries removed, null when it could not carry the purge. */
  redis: { purge(message: PurgeMessage, onClientPath?: boolean): Promise<number | null> } | undefined,
  message: PurgeMessage,
  siblings?: PurgeSiblings,
  users?: UserSessions,
  /** A client's answer waits for it (a session holder's write): the tight Redis bound. */
  onClientPath = false,
): Promise<PurgeResult> {
  message = withKnownSlots(message, users);
  if (!redis) {
    const heard = tellSiblings(siblings, message, onClientPath);
    const purged = applyLocalPurge(store, message, users);
    await heard;
    return { purged };
  }
  const redisPurged = await redis.purge(message, onClientPath);
  // Redis could not carry it (down, or its publish failed): this replica's other workers still
  // must hear it, or they would serve what this one dropped, for the long TTL of a followed wiki.
  const heard = redisPurged === null ? tellSiblings(siblings, message, onClientPath) : undefined;
  const purged = applyLocalPurge(store, message, users);
  await heard;
  return { purged, redisPurged };
}

/** The purge for the other workers; on a client's path, settled once they have applied it. */
function tellSiblings(siblings: PurgeSiblings | undefined, message: PurgeMessage, onClientPath: boolean): Promise<void> | undefined {
  if (!siblings) return undefined;
  if (onClientPath && siblings.publishAndWait) return siblings.publishAndWait(message);
  siblings.publish(message);
  return undefined;
}

/**
 * A user purge names the slots this process knows to be the user's: each process learns which
 * sessions are whose from the answers it serves itself (session-users.ts), so another worker or
 * replica may hold a session's entries without knowing whose session it is.
 */
function withKnownSlots(message: PurgeMessage, users: UserSessions | undefined): PurgeMessage {
  if (message.kind !== 'user' || !users) return message;
  const known = users.slots(message.user);
  if (known.length === 0) return message;
  return { ...message, slots: [...new Set([...(message.slots ?? []), ...known])] };
}
