/**
 * MediaWiki's change signals, applied: CDN PURGEs (the public listener's PURGE route) and the
 * change follower (follower.ts) both end here, as Changes (changes.ts), which invalidate every
 * cached answer that depends on what they name, in both tiers, locally, in Redis and on every
 * other replica and worker (cache/storage.ts Storage.purge), and end the sessions of users whose
 * rights changed.
 *
 * It also says which TTL defaults apply: the long ones (WIKIEDGE_TTL_FOLLOWED_SECONDS,
 * WIKIEDGE_TTL_SESSION_FOLLOWED_SECONDS) while the follower vouches for what is cached, the
 * short ones otherwise (PURGEs alone do not carry log events: blocks, protections, merges).
 */
import type { Logger } from 'pino';
import type { PurgeMessage, PurgeResult } from '../cache/purge.js';
import { type Change, type ChangeSource, changeConfirmed } from '../policy/changes.js';
import type { GapReason } from '../words/outcomes.js';
import { DEFAULT_NAMESPACES, type Namespaces } from '../mediawiki/titles.js';

export interface TtlDefaults {
  readonly ttlPublicSeconds: number;
  readonly ttlSessionSeconds: number;
}

export interface ChangeMetrics {
  event(source: ChangeSource, type: string): void;
  invalidated(cause: ChangeSource | 'rebound' | 'user' | 'gap', count: number): void;
  lag(source: ChangeSource, seconds: number): void;
}

/**
 * Where a change is applied: everywhere (Redis, this process, the other replicas and workers),
 * or in this process only (a worker of a cluster without Redis that follows for itself: each of
 * its siblings follows too, relaying would apply every change once per worker in every worker).
 */
export type Reach = 'everywhere' | 'here';

export interface SignalsOptions {
  /**
   * Apply a purge everywhere (cache/storage.ts Storage.purge, the gateway's storage); a rebound's
   * with `rebound`, which the shared tier does not keep to carry later when it cannot take it now.
   */
  readonly purge: (message: PurgeMessage, options?: { readonly rebound?: boolean }) => Promise<PurgeResult>;
  /** Apply a purge to this process's local tier only (cache/storage.ts Storage.purgeHere). */
  readonly purgeHere: (message: PurgeMessage) => Promise<PurgeResult>;
  readonly metrics: ChangeMetrics;
  readonly log: Logger;
  readonly now: () => number;
  /** The short defaults (no follower, or one not healthy) and the long ones. */
  readonly shortTtl: TtlDefaults;
  readonly followedTtl: TtlDefaults;
  /** WIKIEDGE_REBOUND_PURGE_MS: the second invalidation of a change's tags comes this long after the first (0: none). */
  readonly reboundMs: number;
}

/**
 * Rebounds due within this long of each other are made as one purge (one pass over the indexes,
 * one Redis script, one message): a wiki changing many times a second makes about ten a second,
 * each up to this much earlier than WIKIEDGE_REBOUND_PURGE_MS for the changes that joined it last.
 */
const REBOUND_BATCH_MS = 100;

/** The tags of the changes whose rebound falls due together, and where they are applied. */
interface Rebound {
  readonly due: number;
  readonly reach: Reach;
  readonly tags: Set<string>;
  timer: NodeJS.Timeout | undefined;
}

/** Rebounds a retiring gateway had not made yet, for the next one (cluster/generations.ts retire). */
export type PendingRebounds = readonly { readonly due: number; readonly reach: Reach; readonly tags: readonly string[] }[];

export class ChangeSignals {
  private ns: Namespaces = DEFAULT_NAMESPACES;
  private follower: { readonly healthy: boolean } | undefined;
  private confirmer: ((title: string) => Promise<void>) | undefined;
  /** Rebound purges not made yet, oldest first. */
  private readonly rebounds: Rebound[] = [];
  private readonly reboundsUnderWay = new Set<Promise<void>>();
  /** close() was called: its storage is closing, no rebound is scheduled any more. */
  private closed = false;

  constructor(private readonly opts: SignalsOptions) {}

  get namespaces(): Namespaces {
    return this.ns;
  }

  /** The wiki's own namespace names (the follower reads them from siteinfo). */
  setNamespaces(ns: Namespaces): void {
    this.ns = ns;
  }

  /**
   * Who asks the wiki whether a page changed and then applies what its change touches
   * (purge-confirmation.ts PurgeConfirmations.note), for changes that name pages to `confirm`.
   */
  confirmWith(confirmer: (title: string) => Promise<void>): void {
    this.confirmer = confirmer;
  }

  /** The follower whose health decides the TTL defaults. */
  followWith(follower: { readonly healthy: boolean }): void {
    this.follower = follower;
  }

  /**
   * The TTL defaults that apply now to an answer: the long ones while the follower vouches for
   * what it depends on. `signalled` false: what the answer reads changes without a signal the
   * follower sees (dependencies.ts changesAreSignalled), so the short ones whatever the follower.
   */
  ttlDefaults(signalled = true): TtlDefaults {
    return signalled && this.follower?.healthy ? this.opts.followedTtl : this.opts.shortTtl;
  }

  /**
   * Invalidate what the changes name, everywhere, as one batch: their tags merged into one
   * invalidation (one purge: one pass over the store's indexes, one Redis script, one message to
   * the other replicas), each user named once however many rows name it (a mass block). The
   * follower hands a burst over in batches of bounded size (follower.ts APPLY_BATCH_ROWS).
   */
  async apply(changes: readonly Change[], reach: Reach = 'everywhere'): Promise<number> {
    const purge = reach === 'here' ? this.opts.purgeHere : this.opts.purge;
    let total = 0;
    const tags = new Set<string>();
    const users = new Set<string>();
    for (const change of changes) {
      this.opts.metrics.event(change.source, change.type);
      for (const tag of change.tags) tags.add(tag);
      for (const user of change.users) users.add(user);
    }
    if (tags.size > 0) {
      const result = await purge({ kind: 'tags', tags: [...tags] });
      const n = result.purged + (result.redisPurged ?? 0);
      total += n;
      this.opts.metrics.invalidated(changes[0]!.source, n);
      this.reboundLater(tags, reach);
    }
    for (const user of users) {
      // Everywhere even when changes are applied here only: this process may be the only one
      // that learned which sessions are the user's (cache/purge.ts withKnownSlots), and its
      // siblings, following for themselves, would not find those sessions.
      const result = await this.opts.purge({ kind: 'user', user });
      const n = result.purged + (result.redisPurged ?? 0);
      total += n;
      this.opts.metrics.invalidated('user', n);
      this.opts.log.info({ user, evicted: n }, 'the rights of a user changed: its sessions` cache entries were evicted');
    }
    // Pages whose lists wait for the wiki to confirm a change (a write that may have saved nothing):
    // asked together, each waited for a bounded time (purge-confirmation.ts CONFIRM_WAIT_MS). Without
    // a confirmer, the pages count as changed.
    const confirm = new Set(changes.flatMap((c) => c.confirm ?? []));
    if (confirm.size > 0) {
      const confirmer = this.confirmer;
      // Not awaited: the pages' own answers went above, and the write's answer does not wait a
      // round trip to the wiki for its lists (bots saving statement after statement would); the
      // confirmation applies them within about a second (purge-confirmation.ts), as for a PURGE.
      if (confirmer) for (const title of confirm) void confirmer(title);
      else
        total += await this.apply(
          [...confirm].map((title) => changeConfirmed(title, this.ns)),
          reach,
        );
    }
    const now = this.opts.now();
    for (const change of changes) this.opts.metrics.lag(change.source, change.at !== undefined ? Math.max(0, (now - change.at) / 1000) : 0);
    return total;
  }

  /**
   * The same tags invalidated again WIKIEDGE_REBOUND_PURGE_MS later, as MediaWiki's
   * `$wgCdnReboundPurgeDelay` sends its PURGEs twice. MediaWiki answers a write, and sends its
   * PURGEs and writes its recentchanges row, before its post-send updates run
   * (DerivedPageDataUpdater::doUpdates: doSecondaryDataUpdates with `'defer' =>
   * DeferredUpdates::POSTSEND`): the links tables (categorymembers, backlinks, links), Wikibase's
   * term store and sitelinks (wbsearchentities, wbgetentities by sites and titles, entityterms)
   * and the search index are written after. An answer read in between is read from the old ones,
   * and with the first invalidation behind it would be kept for its whole TTL; the rebound removes
   * it, and an answer under way meanwhile is not stored (cache/store.ts InvalidationLog).
   * test/in-process/a-read-during-the-wikis-post-send-updates-is-not-kept.test.ts.
   */
  private reboundLater(tags: Iterable<string>, reach: Reach, delay: number = this.opts.reboundMs): void {
    if (this.closed || this.opts.reboundMs <= 0) return;
    const due = this.opts.now() + delay;
    const last = this.rebounds.at(-1);
    // Not when the clock stepped back since: it would join a batch due up to its whole delay early.
    if (last && last.reach === reach && due >= last.due && due - last.due < REBOUND_BATCH_MS) {
      for (const tag of tags) last.tags.add(tag);
      return;
    }
    const rebound: Rebound = { due, reach, tags: new Set(tags), timer: undefined };
    rebound.timer = setTimeout(() => this.rebound(rebound), Math.max(0, delay));
    // A pending rebound holds no process open: close() makes the ones still due.
    rebound.timer.unref();
    this.rebounds.push(rebound);
  }

  private rebound(rebound: Rebound): void {
    const at = this.rebounds.indexOf(rebound);
    if (at === -1) return;
    this.rebounds.splice(at, 1);
    clearTimeout(rebound.timer);
    const message: PurgeMessage = { kind: 'tags', tags: [...rebound.tags] };
    // Not kept for Redis when it cannot take it: a rebound owed would crowd out the purges owed
    // during an outage (tiered-storage.ts MAX_OWED), and the change's own, owed too, is carried
    // after its rebound was due.
    const made = (rebound.reach === 'here' ? this.opts.purgeHere(message) : this.opts.purge(message, { rebound: true })).then(
      (result) => this.opts.metrics.invalidated('rebound', result.purged + (result.redisPurged ?? 0)),
      (err: unknown) => this.opts.log.warn({ err: String(err), tags: rebound.tags.size }, 'change signals: a rebound purge failed'),
    );
    this.reboundsUnderWay.add(made);
    void made.finally(() => this.reboundsUnderWay.delete(made));
  }

  /** Rebounds not yet made or not yet done (for tests that must start after the previous change's rebound). */
  get pendingRebounds(): number {
    return this.rebounds.length + this.reboundsUnderWay.size;
  }

  /**
   * The rebounds not made yet, taken away (their timers stopped): a reload hands them to the next
   * gateway (adoptRebounds), which makes each when it was due, on the tiers it now serves from.
   */
  takeRebounds(): PendingRebounds {
    const taken = this.rebounds.map((r) => ({ due: r.due, reach: r.reach, tags: [...r.tags] }));
    for (const r of this.rebounds) clearTimeout(r.timer);
    this.rebounds.length = 0;
    return taken;
  }

  adoptRebounds(pending: PendingRebounds): void {
    const now = this.opts.now();
    for (const r of pending) this.reboundLater(r.tags, r.reach, r.due - now);
  }

  /**
   * A closing gateway makes its rebounds now rather than drop them (early: an answer stored after
   * this and before it was due may still be one read before the wiki's post-send updates), and
   * waits for those under way; called before its storage closes (apps/app.ts). A change applied
   * after this (a confirmation that was already asked) schedules none: the storage is closing.
   */
  async close(): Promise<void> {
    this.closed = true;
    for (const rebound of [...this.rebounds]) this.rebound(rebound);
    await Promise.all(this.reboundsUnderWay);
  }

  /** Closed (close()): its gateway is closing, what it stores no longer matters. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** A gap: nothing cached before `before` is vouched for any more (refreshed at next use). */
  async expire(before: number, reason: GapReason, reach: Reach = 'everywhere'): Promise<void> {
    const gap: PurgeMessage = reason === 'stalled' ? { kind: 'expire', before, stalled: true } : { kind: 'expire', before };
    await (reach === 'here' ? this.opts.purgeHere : this.opts.purge)(gap);
    this.opts.metrics.invalidated('gap', 0);
    this.opts.log.warn(
      { gap: reason, before: new Date(before).toISOString() },
      'change signals: everything cached before this instant is refreshed at its next use',
    );
  }
}
