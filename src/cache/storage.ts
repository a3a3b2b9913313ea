/**
 * The storage seam: everything the request path, the purge paths and the process's start and
 * stop do with cached entries, whatever holds them. Two backends implement it:
 *
 *   cache/local-storage.ts   the in-process tiers alone (cache/store.ts): one process, or the
 *                            workers of one replica told of each other's purges over IPC
 *   cache/tiered-storage.ts  the in-process tiers in front of a tier shared by every replica
 *                            (a SharedTier below: cache/redis-tier.ts today), filled from it on
 *                            a shared hit, one fetch per key across replicas through its lock,
 *                            purges fanned out through it
 *
 * Which one a process uses is decided once, from the configuration, in gateway/gateway.ts; the
 * steps see only this interface. test/in-process/storage-contract.test.ts holds every backend
 * to the same cases.
 */
import type { RedisWaitOutcome } from '../observe/metrics.js';
import type { Freshness } from '../policy/freshness.js';
import type { PurgeMessage } from '../words/purge-message.js';
import type { Tier } from '../words/outcomes.js';
import type { CacheEntry } from './entry.js';
import type { Guarded } from './guards.js';
import type { PurgeResult, ReplicaCount } from './purge.js';

/** An entry found at lookup; `shared`: taken from the shared tier (X-Cache `hit-shared`). */
export interface Found {
  readonly entry: CacheEntry;
  readonly shared: boolean;
}

/** What the leader of a miss ended with: its own fetch, or the entry another replica stored. */
/**
 * What a storage step gives: at once when the storage has it at hand (the local tier alone), a
 * promise when it must ask (the shared tier), as undici's CacheStore `get()` may return either.
 * The request path awaits only a promise: a miss paid an await per step for nothing
 * (docs/BENCHMARKS.md run X).
 */
export type Awaitable<T> = T | Promise<T>;

export type Led<T> = { readonly fetched: T } | { readonly entry: CacheEntry };

/**
 * The invalidations every tier had seen when a fetch began (cache/store.ts InvalidationLog locally,
 * redis/invalidations.ts shared): an answer whose guard tags were invalidated since is not stored.
 */
export interface FetchMark {
  readonly local: number;
  /** Undefined: no shared tier, or it could not be asked (the answer is then kept locally only). */
  readonly shared: number | undefined;
}

export interface FetchOnceOptions {
  /** How long to wait for another replica's fetch (WIKIEDGE_COALESCE_WAIT_MS). */
  readonly waitMs: number;
  /** Called when this replica waits for another's fetch instead of fetching itself. */
  readonly waiting?: () => void;
}

export interface PurgeOptions {
  /** A client's answer waits for it (a session holder's write): the tight shared-tier bound. */
  readonly onClientPath?: boolean;
  /**
   * false: the other workers of this replica are told by the caller (the primary's fan-out,
   * cluster/purge-fan-out.ts), not through the siblings this storage was given.
   */
  readonly tellSiblings?: boolean;
  /**
   * An admin purge: wait (bounded: cache/redis/replica-acks.ts) for the other replicas to say
   * how many entries they removed, and answer with it (PurgeResult.replicas). Never on a
   * client's path: a PURGE or a session's write does not wait for other replicas.
   */
  readonly countReplicas?: boolean;
  /**
   * false: a purge the shared tier cannot carry now is not kept to carry once it answers (a
   * change's rebound, invalidation/signals.ts: the change's own purge is kept, and carried after
   * the rebound was due). Kept by default.
   */
  readonly oweIfUnreachable?: boolean;
}

/** The change follower's cursor and its one-follower lease, where every replica finds them. */
export interface SharedFollowerState {
  loadCursor(): Promise<unknown>;
  saveCursor(cursor: unknown): Promise<void>;
  holdLease(leaseMs: number): Promise<boolean | undefined>;
  releaseLease(): Promise<void>;
}

/** Purges a storage kept for a shared tier that could not take them (tiered-storage.ts), oldest first, and whether more were lost. */
export interface OwedPurges {
  readonly messages: readonly PurgeMessage[];
  readonly overflow: boolean;
}

export interface Storage {
  /** Whether a tier shared with other replicas is configured (it may be down at any moment). */
  readonly shared: boolean;
  /** The follower's state in the shared tier; undefined without one (it lives in the process). */
  readonly followerState: SharedFollowerState | undefined;

  /** Wait (at most `maxWaitMs`) for the shared tier at start, and take the gap it records. */
  open(maxWaitMs: number): Promise<void>;
  close(): Promise<void>;

  /**
   * The entry for `key`: the local tier's when fresh; else the shared tier's when it replaces
   * the local one (policy/freshness.ts replacesLocal), filling the local tier; else the local
   * one, whatever its freshness. A shared tier that fails is not asked (never a throw).
   */
  lookup(tier: Tier, key: string): Awaitable<Found | undefined>;
  /** What an entry's age means now (policy/freshness.ts), with this storage's windows and gaps. */
  freshness(entry: CacheEntry): Freshness;
  /** Drop one local entry (a dead one found at lookup). */
  remove(tier: Tier, key: string): void;

  /**
   * One fetch of `key` across replicas: this one fetches (`fetched`) unless another replica is
   * fetching it already, whose fresh entry is then waited for (bounded by `waitMs`), kept
   * locally and returned (`entry`). A shared tier that fails means fetching right away.
   */
  fetchOnce<T>(tier: Tier, key: string, fetch: () => Promise<T>, options: FetchOnceOptions): Promise<Led<T>>;
  /**
   * One background refresh of `key` across replicas: undefined, without refreshing, when another
   * replica is refreshing it (its entry reaches this one through the shared tier).
   */
  refreshOnce<T>(tier: Tier, key: string, refresh: () => Promise<T>): Promise<T | undefined>;

  /** Noted before the wiki is asked (FetchMark). */
  mark(): Awaitable<FetchMark>;
  /** Whether an answer with these guard tags (guards.ts) may predate an invalidation made since `mark`, locally. */
  invalidatedSince(answer: Guarded, mark: FetchMark): boolean;
  /**
   * Keep `entry` locally and, when the shared tier's mark was taken, there too (awaited, so a
   * replica asked next finds it), unless an invalidation since `mark` reached its guard tags.
   * False when the local tier did not keep it (larger than the tier, or invalidated).
   */
  store(tier: Tier, key: string, entry: CacheEntry, mark: FetchMark): Awaitable<boolean>;

  /**
   * A purge (a URL's variants, a session, a user, a module, a prefix, everything, tags, a gap):
   * the shared tier first, then this process's tiers, while the others hear it (the shared
   * tier's channel, or the siblings when it cannot carry it).
   */
  purge(message: PurgeMessage, options?: PurgeOptions): Promise<PurgeResult>;
  /** A purge of this process's tiers only. Returns how many entries it removed. */
  purgeHere(message: PurgeMessage): number;

  /**
   * The purges this storage still owes its shared tier, taken from it (it no longer carries
   * them): a reload hands them to the next gateway's storage (cluster/generations.ts retire),
   * which carries them once its shared tier answers (`adoptOwed`). Dropped with the old
   * gateway, Redis and the other replicas kept what they had removed here.
   */
  takeOwed(): Promise<OwedPurges>;
  /**
   * Whether purges applied here still wait to reach the shared tier (the other replicas may
   * serve what they removed until they are carried); false without a shared tier.
   */
  owesPurges(): boolean;
  /** Carry `owed` as if this storage had kept them itself (none to carry without a shared tier). */
  adoptOwed(owed: OwedPurges): void;
  /**
   * From now on, what this storage owes once it has closed goes to `heir` (a reload's next
   * gateway, which shares its keyspace: cluster/generations.ts retire): the purges its close
   * could not carry, and those made after it (its follower, purge confirmations and channel run
   * until its close; a request past the grace period), instead of being dropped.
   */
  handOwedTo(heir: (owed: OwedPurges) => void): void;

  /** Whose session `slot` is, as this process or (with a shared tier) any replica learned it. */
  userOfSession(slot: string): Promise<string | undefined>;
  /** This process learned whose session `slot` is: every process of the gateway must know. */
  noteSession(slot: string, user: string): void;

  /**
   * What the shared tier holds for a URL key (GET /cache on the admin listener), at most `limit`
   * entries; undefined without a shared tier or when it could not be asked. Optional: read-only,
   * for operators.
   */
  sharedVariants?(urlKey: string, limit: number): Promise<readonly SharedVariant[] | undefined>;
}

/** A lock on a key's fetch across replicas. */
export type LockResult = { readonly kind: 'won'; readonly token: string } | { readonly kind: 'lost' } | { readonly kind: 'unavailable' };

/**
 * What the tiered storage needs of the tier behind the local one (cache/redis-tier.ts is one).
 * Every call answers without throwing: a tier that fails is down (`up` false) and answers
 * undefined, `unavailable` or null until it is back.
 */
export interface SharedTier {
  readonly up: boolean;
  ready(maxMs: number): Promise<boolean>;
  close(): Promise<void>;
  get(tier: Tier, key: string): Promise<CacheEntry | undefined>;
  set(tier: Tier, key: string, entry: CacheEntry, mark?: number): Promise<boolean>;
  invalidationMark(): Promise<number | undefined>;
  staleBefore(): Promise<number | undefined>;
  noteSession(user: string, slot: string): Promise<void>;
  sessionUser(slot: string): Promise<string | undefined>;
  readonly followerState: SharedFollowerState;
  lock(key: string, tier: Tier): Promise<LockResult>;
  unlock(key: string, token: string): Promise<void>;
  waitForEntry(tier: Tier, key: string, accept: (entry: CacheEntry) => boolean, maxWaitMs: number): Promise<{ outcome: RedisWaitOutcome; entry?: CacheEntry }>;
  /** Entries removed; null when the purge could not be carried (down, or its publish failed). */
  purge(message: PurgeMessage, onClientPath?: boolean): Promise<number | null>;
  /**
   * purge(), asking every other replica to say what it removed: `acks` settles with their
   * answers (bounded) while the caller purges its own tiers. Optional: a backend without it
   * answers without the replicas' count.
   */
  purgeCounted?(message: PurgeMessage, onClientPath?: boolean): Promise<{ readonly removed: number | null; readonly acks?: Promise<CountedAcks> }>;
  /** The entries filed under a URL key, at most `limit` (inspection); undefined when it could not be asked. Optional: a backend without it is not listed. */
  variants?(urlKey: string, limit: number): Promise<readonly SharedVariant[] | undefined>;
}

/** What an admin purge heard back (SharedTier.purgeCounted). */
export interface CountedAcks {
  /** The other replicas' answers. */
  readonly replicas: ReplicaCount;
  /** Entries this replica's own message removed here, when it came back before this replica purged its tiers. */
  readonly heardHere: number;
}

/** An entry of the shared tier as inspection shows it: its key is not kept there (hashed), its slot is. */
export interface SharedVariant {
  readonly tier: Tier;
  readonly entry: CacheEntry;
  /** Its encoded size in the shared tier. */
  readonly bytes: number;
}

/** What the storage gives the shared tier it is built with: purges heard from every replica. */
export interface SharedTierHooks {
  /**
   * Apply a purge (ours or another replica's) to this process's tiers; how many entries it
   * removed, or a promise of it when applying it takes the shared tier too (a session's write
   * whose user only this replica knew): the replica answers an ack only once it is applied.
   */
  readonly onPurge: (message: PurgeMessage) => number | void | Promise<number>;
  /** Purges may have been missed (the channel was lost and is back). */
  readonly onPurgesMissed: () => void;
  /**
   * The shared tier's gap mark (nothing stored before `at` is vouched for), read each time the
   * tier comes up: applied here as a gap. A tier calls it before it serves an entry judged by it
   * (cache/redis/stale-before.ts).
   */
  readonly onStaleBefore: (at: number) => void;
}
