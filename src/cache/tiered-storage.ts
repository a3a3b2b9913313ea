/**
 * The storage seam (cache/storage.ts) over this process's tiers (cache/store.ts) in front of a
 * tier every replica shares (a SharedTier: cache/redis-tier.ts). What it adds to the local
 * storage (cache/local-storage.ts):
 *
 * - lookup: on a local miss (or a local entry no longer fresh) the shared tier's entry, when it
 *   replaces the local one, fills the local tier (X-Cache `hit-shared`);
 * - fetchOnce / refreshOnce: the shared tier's lock per key; the winner fetches, stores (here
 *   and there) and releases it; a loser waits for the winner's fresh entry (bounded), then
 *   fetches itself; a background refresh that loses is left to the winner;
 * - mark / store: the shared tier's own invalidation number, so that what a purge on another
 *   replica overtook is not written there either (redis/invalidations.ts);
 * - purge: the shared tier first, its channel carries it to every replica's local tier
 *   (SharedTierHooks.onPurge); the siblings are told only when it could not carry it; an admin
 *   purge (countReplicas) also waits, bounded, for the other replicas' count of what they removed;
 * - which sessions are whose, kept where every replica finds them.
 *
 * The shared tier failing (down, slow) never fails a call: lookups answer from the local tier,
 * fetches go ahead alone, stores stay local (redis-tier.ts: every call is bounded, then down).
 * A purge it could not carry (down, a shard failing over, the publish failed) is kept and carried
 * once it answers again (owed-purges.ts: each once, within bounds; past them, a gap instead), so
 * that neither the shared tier nor the other replicas keep what it removed here: not lost
 * silently, and logged. Until then, no entry of the shared tier that one of them removed here
 * is copied back (owedMark).
 */
import type { Logger } from 'pino';
import type { Tier } from '../words/outcomes.js';
import type { PurgeMessage } from '../words/purge-message.js';
import { type Freshness, replacesLocal } from '../policy/freshness.js';
import type { CacheEntry } from './entry.js';
import type { Guarded } from './guards.js';
import { type PurgeResult, type PurgeSiblings, type SessionBook, applyLocalPurge, purgeEverywhere } from './purge.js';
import type { CacheStore } from './store.js';
import { OwedQueue } from './owed-purges.js';
import type {
  CountedAcks,
  FetchMark,
  FetchOnceOptions,
  Found,
  Led,
  OwedPurges,
  PurgeOptions,
  SharedFollowerState,
  SharedTier,
  SharedTierHooks,
  SharedVariant,
  Storage,
} from './storage.js';

export { MAX_OWED, MAX_OWED_SLOTS } from './owed-purges.js';
/** How often the purges kept are tried again. */
const OWED_RETRY_MS = 500;
/**
 * How long the first purge kept may keep failing, tried while the shared tier said it was up
 * (at least OWED_TRIES_WHILE_UP times), before it becomes a gap so that it no longer holds back
 * the purges behind it: one Redis refuses every time (an error reply: an ACL without SCAN or
 * UNLINK, a CROSSSLOT, out of memory) or never finishes within its bound. An error reply marks
 * the tier down until its next check (redis/connection.ts), so the tries are counted by whether
 * the tier was up when each began, and a slow spell of a few seconds does not empty every cache.
 */
export const OWED_STUCK_MS = 30_000;
export const OWED_TRIES_WHILE_UP = 3;

export interface TieredStorageOptions {
  /** The in-process tiers, in front. */
  readonly store: CacheStore;
  /** Which sessions are whose, as this process learned it (policy/session-users.ts). */
  readonly users: SessionBook;
  /** The other workers of this replica (cluster mode), told when the shared tier cannot carry a purge. */
  readonly siblings?: PurgeSiblings;
  readonly now: () => number;
  readonly log: Logger;
}

export class TieredStorage implements Storage {
  readonly shared = true;
  private readonly local: CacheStore;
  private readonly tier: SharedTier;
  /** Purges the shared tier could not carry (owed-purges.ts), and whether more were lost. */
  private readonly owed = new OwedQueue();
  private owedOverflow = false;
  /**
   * The local invalidation mark from before the first purge now owed was applied here (0 for
   * purges handed over by another process): while any is owed, an entry of the shared tier that
   * one of them removed here is not copied back (lookup, fetchOnce: fromShared). The shared tier
   * still holds it until the purge is carried, and this replica said it was purged. Gaps are
   * left out (the entry's freshness here answers for them): the channel's return after every
   * outage is one, and counted, it refused every entry of the shared tier until the last owed
   * purge was carried.
   */
  private owedMark: number | undefined;
  /** The earliest mark of the purges owed since the queue was last cleared for a gap (carryOwedNow). */
  private owedMarkSinceGap: number | undefined;
  private owedTimer: NodeJS.Timeout | undefined;
  /** Failed tries of the first purge kept begun while the shared tier was up, and when the first failed (OWED_STUCK_MS). */
  private headFailures = 0;
  private headFailingSince = 0;
  /** What the siblings were last told: whether this process owes purges (tellOwing). */
  private toldOwing = false;
  /** The carry of the owed purges under way, if any. */
  private carrying: Promise<void> | undefined;
  private closed = false;
  /** Where what this storage owes once closed goes (handOwedTo): a reload's next gateway. */
  private heir: ((owed: OwedPurges) => void) | undefined;
  /**
   * Shared-tier reads under way, by tier and key, with the invalidation mark noted before each
   * was sent: a lookup that joins one judges its reply by that mark, not by its own, which may
   * postdate an invalidation the reply predates (lookup).
   */
  private readonly reading = new Map<string, { readonly mark: number; readonly reply: Promise<CacheEntry | undefined> }>();
  /** The newest gap mark the shared tier handed over (onStaleBefore), applied here. */
  private staleBeforeTaken = 0;

  /** `connect`: builds the shared tier, given what it must call back (purges heard, purges missed). */
  constructor(
    private readonly opts: TieredStorageOptions,
    connect: (hooks: SharedTierHooks) => SharedTier,
  ) {
    this.local = opts.store;
    this.tier = connect({
      onPurge: (message) => this.heard(message),
      // The channel was lost: purges and invalidations other replicas sent meanwhile never
      // came. What this tier holds is no longer vouched for, as after a gap in the change
      // signals: refreshed at its next use (from the shared tier when it holds a newer copy),
      // still a fallback while the wiki fails.
      onPurgesMissed: () => {
        this.local.expireBefore(opts.now());
        opts.log.warn(
          { redisSubscriber: 'resumed' },
          'purges sent while the redis channel was lost may have been missed: the local tier is refreshed at next use',
        );
      },
      // A gap recorded in the shared tier, read each time it comes up (redis/stale-before.ts): at
      // start, and after a down in which this process heard none of the gaps taken meanwhile.
      // Applied here, it makes the shared tier's entries stored before it stale too (lookup and
      // fetchOnce judge them by this tier's freshness), so a replica started while Redis was
      // unreachable does not serve them as fresh once it answers.
      onStaleBefore: (at) => {
        if (at <= this.staleBeforeTaken) return;
        this.staleBeforeTaken = at;
        this.local.expireBefore(at);
        opts.log.info({ redisStaleBefore: at }, 'a gap recorded in redis: what was cached before it is refreshed at next use');
      },
    });
  }

  get followerState(): SharedFollowerState {
    return this.tier.followerState;
  }

  /**
   * Give the shared tier a moment to connect (and to read its gap mark) so the first requests
   * already share; never wait longer. A gap the change signals met before this process started
   * still holds for what the shared tier keeps: the tier hands it over (onStaleBefore) whenever
   * it comes up, now or later, and serves none of its entries until it has.
   */
  async open(maxWaitMs: number): Promise<void> {
    if (!(await this.tier.ready(maxWaitMs))) {
      this.opts.log.warn({ waitedMs: maxWaitMs }, 'redis not ready at start: starting without it, it is used as soon as it answers');
    }
  }

  /**
   * The purges still owed are tried once more (each bounded like any purge) before the shared
   * tier is closed: a reload or a worker's replacement retires this storage, and what it owed
   * would otherwise be lost without a word. What still cannot be carried is logged as an error:
   * the shared tier and the other replicas may keep what those purges removed here.
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.owedTimer) clearInterval(this.owedTimer);
    this.owedTimer = undefined;
    // A carry the timer began is let finish (the tier is closed after it), then one more try.
    await this.carrying;
    if (this.owes()) {
      await this.carryOwed();
      if (this.owedTimer) clearInterval(this.owedTimer);
      this.owedTimer = undefined;
      if (this.owes() && this.heir) {
        this.opts.log.info(
          { redisPurge: 'handed-on', owed: this.owed.size, overflow: this.owedOverflow },
          'closing with purges the shared tier never took: the next gateway carries them',
        );
        this.heir(await this.takeOwed());
      } else if (this.owes()) {
        this.opts.log.error(
          { redisPurge: 'dropped', owed: this.owed.size, overflow: this.owedOverflow },
          'closing with purges the shared tier never took: with workers, another carries a gap for them (cluster/primary.ts); else it and the other replicas may serve what they removed here until it expires',
        );
      }
    }
    return this.tier.close();
  }

  async lookup(tier: Tier, key: string): Promise<Found | undefined> {
    const local = this.local.get(tier, key);
    if (local && this.local.freshness(local) === 'fresh') return { entry: local, shared: false };
    const { mark, reply } = this.readShared(tier, key);
    const remote = await reply;
    if (remote && (!local || replacesLocal(remote, local, this.opts.now())) && this.local.freshness(remote) !== 'dead' && this.fromShared(remote, mark)) {
      // Delivered as stored: the local copy counts a writer's clock ahead of ours from now (store.ts).
      const copied = this.local.set(tier, key, remote) ? this.local.get(tier, key) : undefined;
      return { entry: copied ?? remote, shared: true };
    }
    return local ? { entry: local, shared: false } : undefined;
  }

  /**
   * One shared-tier read per tier and key at a time. The mark is noted before the read is sent:
   * its reply may have been read before an invalidation that this process applied while the
   * reply was on its way (the same guard as a fetch's), and a lookup that joins a read sent
   * before its own mark takes that read's mark with it (test/in-process/a-shared-read-joined-after-a-purge-is-not-copied-back.test.ts).
   */
  private readShared(tier: Tier, key: string): { readonly mark: number; readonly reply: Promise<CacheEntry | undefined> } {
    const id = `${tier}\u0000${key}`;
    let read = this.reading.get(id);
    if (!read) {
      const mark = this.local.invalidationMark();
      read = { mark, reply: this.tier.get(tier, key).finally(() => this.reading.delete(id)) };
      this.reading.set(id, read);
    }
    return read;
  }

  freshness(entry: CacheEntry): Freshness {
    return this.local.freshness(entry);
  }

  remove(tier: Tier, key: string): void {
    this.local.delete(tier, key);
  }

  async fetchOnce<T>(tier: Tier, key: string, fetch: () => Promise<T>, options: FetchOnceOptions): Promise<Led<T>> {
    const lock = await this.tier.lock(key, tier);
    if (lock.kind === 'won') {
      try {
        return { fetched: await fetch() };
      } finally {
        void this.tier.unlock(key, lock.token);
      }
    }
    if (lock.kind === 'lost') {
      options.waiting?.();
      const mark = this.local.invalidationMark();
      const waited = await this.tier.waitForEntry(tier, key, (e) => this.local.freshness(e) === 'fresh', options.waitMs);
      // The winner's entry, unless this process applied an invalidation of it meanwhile (see lookup).
      if (waited.entry && this.fromShared(waited.entry, mark)) {
        this.local.set(tier, key, waited.entry);
        return { entry: waited.entry };
      }
    }
    return { fetched: await fetch() };
  }

  async refreshOnce<T>(tier: Tier, key: string, refresh: () => Promise<T>): Promise<T | undefined> {
    const lock = await this.tier.lock(key, tier);
    if (lock.kind === 'lost') return undefined;
    try {
      return await refresh();
    } finally {
      if (lock.kind === 'won') void this.tier.unlock(key, lock.token);
    }
  }

  async mark(): Promise<FetchMark> {
    const local = this.local.invalidationMark();
    return { local, shared: this.tier.up ? await this.tier.invalidationMark() : undefined };
  }

  invalidatedSince(answer: Guarded, mark: FetchMark): boolean {
    return this.local.invalidatedSince(answer, mark.local);
  }

  async store(tier: Tier, key: string, entry: CacheEntry, mark: FetchMark): Promise<boolean> {
    if (this.local.invalidatedSince(entry, mark.local) || !this.local.set(tier, key, entry)) return false;
    // The shared tier down when the fetch began: the invalidations it took meanwhile cannot be
    // checked, so the answer is not written there (the local mark guarded the set above).
    if (mark.shared !== undefined) await this.tier.set(tier, key, entry, mark.shared);
    return true;
  }

  async purge(message: PurgeMessage, options: PurgeOptions = {}): Promise<PurgeResult> {
    const siblings = options.tellSiblings === false ? undefined : this.opts.siblings;
    // An admin purge: the other replicas' answers are waited for once this one's tiers are
    // purged, and counted. A session's purge its client's answer waits for (a write, a logout):
    // waited for too (bounded, replica-acks.ts CLIENT_ACK_WAIT_MS), so that the client's next
    // request finds it applied on whichever replica takes it; as the siblings without a shared
    // tier are (purge.ts tellSiblings).
    const waitForReplicas = options.onClientPath ? isSessionPurge(message) : options.countReplicas === true;
    let acks: Promise<CountedAcks> | undefined;
    const counted = this.tier.purgeCounted?.bind(this.tier);
    const tier =
      waitForReplicas && counted
        ? {
            purge: async (m: PurgeMessage, onClientPath?: boolean) => {
              const r = await counted(m, onClientPath);
              acks = r.acks;
              return r.removed;
            },
          }
        : this.tier;
    const before = this.local.invalidationMark();
    const result = await purgeEverywhere(this.local, tier, message, siblings, this.opts.users, options.onClientPath);
    if (result.redisPurged === null && options.oweIfUnreachable !== false) this.owe(message, before);
    if (!acks) return result;
    const { replicas, heardHere } = await acks;
    if (options.onClientPath) return result;
    return { ...result, purged: result.purged + heardHere, replicas };
  }

  async takeOwed(): Promise<OwedPurges> {
    if (this.owedTimer) clearInterval(this.owedTimer);
    this.owedTimer = undefined;
    // A carry under way finishes first: what it carried is not handed on.
    await this.carrying;
    const owed = { messages: this.owed.takeAll(), overflow: this.owedOverflow };
    this.owedOverflow = false;
    this.owedMark = undefined;
    this.owedMarkSinceGap = undefined;
    this.resetHead();
    this.tellOwing();
    return owed;
  }

  handOwedTo(heir: (owed: OwedPurges) => void): void {
    this.heir = heir;
  }

  adoptOwed(owed: OwedPurges): void {
    // Applied here when the process that owed them told its siblings: before any mark this one has.
    for (const message of owed.messages) this.owe(message, 0);
    if (owed.overflow && this.closed && this.heir) return this.heir({ messages: [], overflow: true });
    if (owed.overflow && this.closed) {
      // Its siblings hear that it owes one (tellOwing): with workers, another carries it once this one has exited.
      this.opts.log.error(
        { redisPurge: 'dropped', overflow: true },
        'a gap handed to this storage came after it closed: with workers, another carries it once this process has exited',
      );
      this.owedOverflow = true;
      this.tellOwing();
      return;
    }
    if (owed.overflow) {
      this.owedOverflow = true;
      // A gap of another process: every purge it stands for was applied here before now (as
      // owe(message, 0) says), whatever gap of this one's is under way.
      this.owedMark = 0;
      this.owedMarkSinceGap = 0;
      this.tellOwing();
      this.carryLater();
    }
  }

  /**
   * Keep a purge the shared tier could not carry, to carry it once it answers. `before`: the
   * local invalidation mark from before it was applied here.
   */
  private owe(message: PurgeMessage, before: number): void {
    if (this.closed) {
      // Settled after close() (a purge heard while closing, a request past the grace period):
      // a reload's next gateway carries it (handOwedTo); else nobody is left to.
      if (this.heir) return this.heir({ messages: [message], overflow: false });
      this.opts.log.error(
        { redisPurge: 'dropped', owed: 1, kind: message.kind },
        'a purge the shared tier could not take came after this storage closed: it and the other replicas may serve what it removed here until it expires',
      );
      return;
    }
    if (!this.owes()) {
      this.opts.log.warn(
        { redisPurge: 'owed', kind: message.kind },
        'a purge could not reach the shared tier: it is carried there and to the other replicas once it answers',
      );
    }
    this.owedMark = Math.min(this.owedMark ?? before, before);
    this.owedMarkSinceGap = Math.min(this.owedMarkSinceGap ?? before, before);
    if (!this.owed.add(message) && !this.owedOverflow) {
      this.owedOverflow = true;
      this.opts.log.warn(
        { redisPurge: 'overflow', owed: this.owed.size, kind: message.kind },
        'more purges than kept could not reach the shared tier: a gap instead, once it answers',
      );
    }
    this.tellOwing();
    this.carryLater();
  }

  /**
   * Whether this process owes purges, told to its siblings when it changes (cluster/primary.ts):
   * a worker that ends owing them, by a crash or a reload while Redis is down, has another
   * worker carry a gap for them instead of losing them.
   */
  private tellOwing(): void {
    const owes = this.owes();
    if (!owes) {
      this.owedMark = undefined;
      this.owedMarkSinceGap = undefined;
    }
    if (owes === this.toldOwing) return;
    this.toldOwing = owes;
    this.opts.siblings?.owesPurges?.(owes);
  }

  private carryLater(): void {
    this.owedTimer ??= setInterval(() => void this.carryOwed(), OWED_RETRY_MS);
    this.owedTimer.unref();
  }

  /**
   * The purges kept, in order, while the shared tier answers; past their bounds (owed-purges.ts), one gap
   * instead (nothing stored before now is vouched for, on every replica).
   */
  private carryOwed(): Promise<void> {
    if (this.carrying) return this.carrying;
    if (!this.tier.up) return Promise.resolve();
    this.carrying = this.carryOwedNow().finally(() => (this.carrying = undefined));
    return this.carrying;
  }

  private async carryOwedNow(): Promise<void> {
    if (this.owedOverflow) {
      // The gap covers what was owed until now; what is owed while it is carried comes after
      // its instant, and is kept.
      this.owed.clear();
      this.owedOverflow = false;
      this.resetHead();
      this.owedMarkSinceGap = undefined;
      if ((await this.tier.purge({ kind: 'expire', before: this.opts.now() })) === null) {
        // The next try's gap, later, covers them too.
        this.owedOverflow = true;
        return;
      }
      // The gap covers every purge owed before it: only those owed since (whatever their marks:
      // one under way may have been applied here before the gap began) hold entries back.
      this.owedMark = this.owedMarkSinceGap;
      this.opts.log.warn(
        { redisPurge: 'gap' },
        'the purges the shared tier could not take are carried as a gap: everything cached before now is refreshed at next use',
      );
    }
    let carried = 0;
    for (let head = this.owed.take(); head !== undefined; head = this.owed.take()) {
      if (head.kind === 'expire' && head.stalled === true && (await this.vouchedSince(head.before))) {
        // This replica heard of no vouching poll because it could not reach the shared tier;
        // the follower that could vouched past the gap's instant, and applied every change to
        // the shared tier and the other replicas meanwhile. The gap was this replica's alone
        // (its local tier took it): carried, it emptied every replica and Redis of what was
        // fresh (test/unit/a-replica-cut-off-from-redis-does-not-expire-the-fleet.test.ts).
        this.opts.log.info(
          { redisPurge: 'stalled-gap-dropped', before: new Date(head.before).toISOString() },
          'a stalled gap owed to the shared tier is dropped: a follower vouched past it',
        );
        this.resetHead();
        continue;
      }
      const upBefore = this.tier.up;
      if ((await this.tier.purge(head)) === null) {
        this.owed.putBack(head);
        // Down: tried again once it answers. Failing while the tier said it was up, again and
        // again for OWED_STUCK_MS: it stands in the way of every purge behind it, and a gap
        // covers it and them.
        if (!upBefore) return;
        const now = this.opts.now();
        if (this.headFailures++ === 0) this.headFailingSince = now;
        if (this.headFailures < OWED_TRIES_WHILE_UP || now - this.headFailingSince < OWED_STUCK_MS) return;
        this.opts.log.warn(
          { redisPurge: 'stuck', kind: head.kind, tries: this.headFailures, failingMs: now - this.headFailingSince, owed: this.owed.size },
          'a purge the shared tier kept refusing: a gap instead, everything cached before now is refreshed at next use',
        );
        this.owedOverflow = true;
        return this.carryOwedNow();
      }
      this.resetHead();
      carried++;
    }
    // A gap owed meanwhile (handed over, or more purges than kept): carried now, not left without a timer.
    if (this.owedOverflow) return this.carryOwedNow();
    clearInterval(this.owedTimer);
    this.owedTimer = undefined;
    this.tellOwing();
    if (carried > 0) this.opts.log.info({ redisPurge: 'carried', carried }, 'the purges the shared tier missed were carried to it and to the other replicas');
  }

  /**
   * Whether a follower vouched at or after `before`: the cursor's polledAt in the shared tier
   * (invalidation/follower-cursor.ts Cursor: the last poll that vouched, kept while later ones
   * ended behind). Unread: no.
   */
  private async vouchedSince(before: number): Promise<boolean> {
    try {
      const cursor = (await this.tier.followerState.loadCursor()) as { polledAt?: unknown } | undefined;
      return typeof cursor?.polledAt === 'number' && cursor.polledAt >= before;
    } catch {
      return false;
    }
  }

  owesPurges(): boolean {
    // A carry under way has taken its purge (or the gap's) off the queue before Redis took it:
    // owed until it did.
    return this.owes() || this.carrying !== undefined;
  }

  private owes(): boolean {
    return this.owed.size > 0 || this.owedOverflow;
  }

  /**
   * Whether an entry read from the shared tier may be taken: no invalidation this process applied
   * since `mark` (noted before it was asked for) reaches it, nor a purge of it still owed there (owedMark).
   */
  private fromShared(entry: CacheEntry, mark: number): boolean {
    if (this.local.invalidatedSince(entry, mark)) return false;
    return this.owedMark === undefined || !this.local.invalidatedSince(entry, this.owedMark, true);
  }

  private resetHead(): void {
    this.headFailures = 0;
    this.headFailingSince = 0;
  }

  purgeHere(message: PurgeMessage): number {
    return applyLocalPurge(this.local, message, this.opts.users);
  }

  async userOfSession(slot: string): Promise<string | undefined> {
    return this.opts.users.userOf(slot) ?? (await this.tier.sessionUser(slot));
  }

  noteSession(slot: string, user: string): void {
    this.opts.users.note(slot, user);
    // Every worker and replica finds it in the shared tier (su:, us:).
    void this.tier.noteSession(user, slot);
  }

  /** What the shared tier holds for a URL key (inspection), when it can say. */
  sharedVariants(urlKey: string, limit: number): Promise<readonly SharedVariant[] | undefined> {
    return this.tier.variants ? this.tier.variants(urlKey, limit) : Promise.resolve(undefined);
  }

  /**
   * A purge heard on the shared tier's channel (ours or another replica's). A session wrote whose
   * user its replica did not know (steps/session-lifecycle.ts), and this one knows: the user's
   * other sessions go here at once, then from the shared tier (and through its channel from the
   * other replicas), then here again: a lookup between the first two would have copied their
   * entries back from the shared tier (lookup). Settled, and so answered to a purger waiting for
   * the replicas, only then; owed when the shared tier could not carry it.
   */
  private heard(message: PurgeMessage): number | Promise<number> {
    const users = this.opts.users;
    const removed = applyLocalPurge(this.local, message, users);
    if (message.kind !== 'slot' || !message.wrote) return removed;
    const user = users.userOf(message.slot);
    if (user === undefined) return removed;
    const everySession: PurgeMessage = { kind: 'user', user, slots: [...new Set([message.slot, ...users.slots(user)])] };
    const before = this.local.invalidationMark();
    return this.tier.purge(everySession).then((redisPurged) => {
      if (redisPurged === null) this.owe(everySession, before);
      return removed + applyLocalPurge(this.local, everySession, users);
    });
  }
}

/** A purge of a session's entries (a write, a logout), or of a user's sessions. */
function isSessionPurge(message: PurgeMessage): boolean {
  return message.kind === 'slot' || message.kind === 'user';
}
