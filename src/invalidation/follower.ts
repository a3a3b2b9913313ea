/**
 * The change follower: polls the wiki's `list=recentchanges` (straight at the wiki, never through
 * the cache) every WIKIEDGE_RC_POLL_MS and turns every row into invalidations (changes.ts). It
 * catches what PURGEs do not carry: log events (blocks, rights, protections, merges, imports),
 * changes made through other servers of a multi-server wiki, and PURGEs lost while the gateway
 * was away (MediaWiki never retries one).
 *
 * The cursor is a position in the order MediaWiki pages recentchanges in: (rc_timestamp, rc_id),
 * ascending with `rcdir=newer` (ApiQueryRecentChanges.php:150-155 in MediaWiki 1.39), where
 * `rccontinue=<timestamp>|<id>` asks for the rows with `rc_timestamp > t OR (rc_timestamp = t AND
 * rc_id >= id)` (ApiQueryRecentChanges.php:136-148). The cursor (ts, id) means: every row up to
 * it was read and applied. Each poll continues from it with `rccontinue=<ts>|<id + 1>`, page after
 * page, carrying it from one poll to the next; every row it returns is after the cursor, so the
 * cursor moves at every row, whatever the number of rows sharing a second, and a burst of any size
 * is read through in order (no fixed re-read window to re-read every poll). rcid alone is not an
 * order (log rows are inserted after the edit's answer, dated earlier), nor is rc_timestamp alone
 * (many rows share a second).
 *
 * Late rows: a log row inserted after the edit's answer (POSTSEND) is dated when its request
 * began, so it may land before the cursor; a transaction that took its rc_id early may commit after
 * a later one was read. Such rows fall in a window just before the cursor: the follower starts
 * each poll from the window's floor instead of the cursor and applies a row there only when its
 * id, with that timestamp, is not among those it applied (`seen`; an id reissued after a
 * database failover is another row: follower-cursor.ts wasSeen). The window is small and never
 * blocks progress: it holds the last LATE_WINDOW_MS before the cursor but at most SEEN_MAX rows and WINDOW_PAGES pages
 * (the floor moves up past older ones, and only moves up), so it costs at most WINDOW_PAGES of a
 * poll's MAX_PAGES_PER_POLL. The poll's time budget (POLL_BUDGET_MS) counts only once the reading
 * is past the cursor: on a slow wiki the window alone may take all of it, and every poll would
 * re-read seen rows without ever moving the cursor. A
 * row that comes later than that, or dated further back (a categorize row hours late), is not
 * seen: a known limit, as it was with the fixed overlap before.
 *
 * Health: the follower vouches for what is cached (the long TTLs, signals.ts) only while its
 * cursor reaches the wiki's present: a poll that read to the last row, or stopped (its page budget
 * spent) past the cursor it started from with the cursor at most maxLagMs
 * (WIKIEDGE_RC_MAX_LAG_SECONDS) behind the wiki's clock (curtimestamp). A poll that stopped
 * before its cursor (its pages spent on rows inserted late) read nothing after it: not healthy,
 * no gap, and the next poll goes on at once. Behind by more (a burst larger than it reads in a
 * poll, rows coming faster than it reads them) it takes a gap ('behind') and jumps to the wiki's
 * newest row: everything cached before is refreshed at next use, so no answer stays vouched for
 * with changes unread behind it. While a poll ends behind, `healthy` is false, whatever an
 * earlier poll vouched. A poll that stops with pages left is followed by the next at once, not
 * after the interval.
 *
 * The cursor is kept where it survives the follower (CursorStore: Redis with replicas), and only
 * one replica follows at a time (Lease: a Redis lease with takeover). The follower that holds the
 * lease writes the cursor after every poll with the instant of the last poll that vouched
 * (`polledAt`) and whether it ended behind: the other replicas read it to know whether somebody
 * still vouches for what they cache.
 *
 * When the follower cannot vouch that it saw every change, nothing cached before is vouched for
 * any more (Gap → expire: refreshed at next use, still a fallback when the wiki fails), and it
 * starts again from the wiki's newest row:
 * - cursor-lost: no cursor at start (a new follower, or Redis restarted empty), or one the
 *   follower cannot read;
 * - clock: the wiki's clock (curtimestamp) went back, the cursor is ahead of it, or a row is
 *   dated in the wiki's future. Still needed with rccontinue: a row dated ahead would take the
 *   cursor past the rows that come after it (dated earlier), so such a row is applied once (kept
 *   in `seen`) and the cursor stays before it;
 * - rc-purged: the cursor is older than the oldest row the wiki still has ($wgRCMaxAge, 90 days
 *   by default, or a table rebuilt): rccontinue would silently go on from the oldest row left.
 *   Checked whenever the follower resumes a cursor that was not polled in the last RESUME_CHECK_MS
 *   (a start, a takeover, an outage);
 * - behind: a poll ended with the cursor further than maxLagMs behind the wiki's clock;
 * - stalled: nobody vouched (no successful poll here, no fresh cursor from the replica that
 *   follows) for longer than the fallback TTL: the wiki or the path to it was down, or Redis
 *   was, and a multi-server wiki may have changed meanwhile;
 * - owed: the cursor was saved by another follower while the purges of rows it had read were
 *   owed to the shared tier (Cursor.owedBy: a Redis Cluster master down); only that follower's
 *   process can carry them, and it may never (it stopped, or lost the lease for good), while
 *   the rows are behind the cursor, never read again.
 * While nobody has vouched for a few intervals the gateway's TTL defaults fall back to the short
 * ones (signals.ts).
 *
 * Rows become changes applied in batches (one `apply` call per APPLY_BATCH_ROWS rows, signals.ts
 * merges their tags into one invalidation), and the cursor moves past a batch only once it was
 * applied: a failed apply reads the batch again at the next poll, none skipped.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Upstream } from '../upstream/upstream.js';
import type { GapReason } from '../words/outcomes.js';
import { type Change, changeFromRow, type RecentChangeRow } from '../policy/changes.js';
import { type Namespaces, namespacesFromSiteinfo } from '../mediawiki/titles.js';
import {
  type Cursor,
  cursorFromStored,
  isoOf,
  LATE_WINDOW_MS,
  nextFloor,
  type Position,
  positionOfContinue,
  prune,
  seconds,
  type State,
  stateOf,
  tsMw,
  cmp,
  wasSeen,
} from './follower-cursor.js';

export { type Cursor, cursorFromStored, LATE_WINDOW_MS } from './follower-cursor.js';

/** At most this many rows are kept in the late window (`seen`): the floor moves past older ones. */
export const SEEN_MAX = 1_000;
/**
 * And at most this many of the wiki's pages of them (rclimit=max is 500 rows for a reader, 5,000
 * for a bot, less where $wgAPIMaxResultSize cuts a page short): the window costs a poll at most
 * these pages of its MAX_PAGES_PER_POLL, whatever the page size.
 */
export const WINDOW_PAGES = 2;
/** At most this many pages of rows per poll (rclimit=max: 500 for a reader); then the next poll at once. */
export const MAX_PAGES_PER_POLL = 40;
/** A poll stops asking for more pages after this long (real time): the lease is renewed per poll. */
export const POLL_BUDGET_MS = 2_500;
/** Within a poll, the lease is renewed before a page asked this long after it was last held (it lasts at least 5 s). */
export const LEASE_RENEW_MS = 1_000;
/** Rows per apply call: their changes are merged into one invalidation (signals.ts apply). */
export const APPLY_BATCH_ROWS = 2_000;
/** A cursor not polled for this long is checked against the oldest row the wiki still has. */
export const RESUME_CHECK_MS = 120_000;
/** The wiki's clock may wobble this much before it counts as going back, or a row as ahead. */
export const CLOCK_SLACK_MS = 5_000;
/** WIKIEDGE_RC_MAX_LAG_SECONDS' default, for followers built without it. */
export const DEFAULT_MAX_LAG_MS = 60_000;
/**
 * This process, as the owner of the purges its followers owe (FollowerOptions.ownerId): one id for
 * every generation of the default deployment, whose reload hands the owed purges on.
 */
const PROCESS_OWNER = randomUUID();

export interface CursorStore {
  /** The stored cursor (any form: parsed by cursorFromStored), undefined when there is none. */
  load(): Promise<unknown>;
  save(cursor: Cursor): Promise<void>;
}

/** Whether this process follows now (only one replica at a time). */
export interface Lease {
  /** Taken or renewed: true; held by another replica: false; unknown (Redis down, slow): undefined. */
  hold(): Promise<boolean | undefined>;
  release(): Promise<void>;
  /**
   * How long a taken or renewed lease lasts. Given, a renewal whose answer is unknown loses the
   * lease only once the last one that succeeded is that old: until then no other replica can
   * have taken it (short of Redis losing the key), and a renewal that only timed out (behind a
   * long purge script in a slow Redis) is not a loss. Without it, every unknown is one.
   */
  readonly durationMs?: number;
}

export interface FollowerMetrics {
  poll(outcome: 'ok' | 'error' | 'standby'): void;
  gap(reason: GapReason): void;
  state(state: { healthy: boolean; leader: boolean; lastSuccessMs: number | undefined; cursorLagSeconds: number | undefined }): void;
  /**
   * The follower's health, to be read when the metrics are (`wikiedge_change_follower_up`): the
   * state() of the last poll lags behind the health the TTL decision reads (ChangeFollower.up).
   */
  followerHealth?(up: () => boolean): void;
}

export interface FollowerOptions {
  readonly upstream: Upstream;
  readonly apiPath: string;
  readonly pollMs: number;
  /** Nobody vouched for this long: not healthy (the TTL defaults fall back). */
  readonly unhealthyAfterMs: number;
  /** Nobody vouched for this long: a gap (everything cached before expires). */
  readonly gapAfterMs: number;
  /** A poll that ends with the cursor further behind the wiki's clock: a gap ('behind'). */
  readonly maxLagMs?: number;
  /** A poll asks for no more pages after this long (real time); POLL_BUDGET_MS unless said. */
  readonly pollBudgetMs?: number;
  readonly requestTimeoutMs: number;
  readonly now: () => number;
  readonly log: Logger;
  readonly metrics: FollowerMetrics;
  readonly cursors: CursorStore;
  readonly lease: Lease;
  /** Invalidate what the changes name, everywhere. */
  readonly apply: (changes: readonly Change[]) => Promise<void>;
  /**
   * Whether changes applied here still wait to reach the shared tier (cache/tiered-storage.ts
   * owe: a Redis Cluster master down, a sweep that timed out): the other replicas may serve what
   * they removed until they are carried, so a poll vouches for nothing while any is owed.
   */
  readonly owesPurges?: () => boolean;
  /**
   * Who owes this follower's owed purges, as its cursor names it (Cursor.owedBy): the process
   * (PROCESS_OWNER) by default, whose owed purges a reload of the default deployment hands to the
   * next generation (cache/tiered-storage.ts adoptOwed) under the same cursor key; tests that run
   * two replicas in one process give each its own.
   */
  readonly ownerId?: string;
  /** Nothing stored before `before` is vouched for any more, everywhere. */
  readonly expire: (before: number, reason: GapReason) => Promise<void>;
  readonly namespaces: (ns: Namespaces) => void;
  /**
   * The wiki's namespaces as last learned (the gateway asks again every 10 minutes:
   * upstream/site-namespaces.ts), read at each poll: the follower's own, read once at its start,
   * went stale when the wiki gained a namespace (WikibaseLexeme installed: its rows lost `t:lexeme`).
   */
  readonly latestNamespaces?: () => Namespaces;
  /**
   * Called once when the follower stops (stop()), after its last poll, with the last instant it
   * (or the leader, for a standby) vouched, undefined when nobody ever did: what it vouched for
   * is vouched for by nobody from then on, unless another follower takes over.
   */
  readonly stopped?: (lastVouched: number | undefined) => Promise<void>;
}

interface RcAnswer {
  curtimestamp?: string;
  continue?: { rccontinue?: string; continue?: string };
  query?: { recentchanges?: RecentChangeRow[] };
  error?: { code?: string; info?: string };
}

/**
 * The rows of an answer; an error when it holds no list. A wiki that disabled the module
 * (`$wgAPIListModules['recentchanges'] = ApiQueryDisabled`) answers 200 with a warning and no
 * `recentchanges` at all, where an empty list is `[]`: read as no rows, the follower vouched for
 * every change while it read none.
 */
function rowsOf(answer: RcAnswer): RecentChangeRow[] {
  if (answer.error) throw errorOf(answer.error);
  const rows = answer.query?.recentchanges;
  if (!Array.isArray(rows)) throw new Error('recentchanges: the answer holds no list of rows (is list=recentchanges disabled?)');
  return rows;
}

/** The error of an answer the wiki gave instead of rows (an API error: HTTP 200, `error`). */
function errorOf(error: NonNullable<RcAnswer['error']>): Error {
  return new Error(`recentchanges: ${error.code ?? 'error'}: ${error.info ?? ''}`);
}

export class ChangeFollower {
  /** The cursor this replica follows from; undefined until it leads and has read the store. */
  private state: State | undefined;
  /** When somebody (this replica, or the one that follows) last vouched for every change. */
  private lastVouched: number | undefined;
  private lastServerTime: number | undefined;
  /** How far behind the wiki's present the last poll ended (ms); 0 when it read to the end. */
  private behindMs: number | undefined;
  /** The last poll (here, or the leader's) ended behind by more than the bound. */
  private behind = false;
  /** The last poll stopped with pages left: the next one comes at once. */
  private more = false;
  /** The last poll that read to its end found purges owed to the shared tier (owesPurges). */
  private owedWhenPolled = false;
  /** Who owes what this follower applied, as a cursor it saved while it owed purges names it (Cursor.owedBy). */
  private readonly owner: string;
  /** Set when a renewal during this poll found the lease taken (holdingLease). */
  private leaseLost = false;
  /** When the last renewal of the lease that succeeded was asked for (performance.now()). */
  private leaseRenewedAt = 0;
  private stalledGapTaken = false;
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private stopping: Promise<void> | undefined;
  private currentNamespaces: Namespaces | undefined;
  private readonly startedAt: number;
  private readonly maxLagMs: number;
  /** The rows of the wiki's fullest page seen (a page followed by another): WINDOW_PAGES' unit. */
  private pageRows = 500;
  /**
   * Where the last page the wiki answered with an API error began, when that error failed the
   * poll (readNewRows); cleared by a poll that ends without narrowing. A page failing there
   * again, or after it, is narrowed down to the row that fails it.
   */
  private apiErrorAt: Position | undefined;
  /** Rows the wiki failed to list (readNewRows), rc_id to timestamp, kept while above the floor. */
  private readonly unlistable = new Map<number, number>();

  constructor(private readonly opts: FollowerOptions) {
    this.owner = opts.ownerId ?? PROCESS_OWNER;
    this.startedAt = opts.now();
    this.maxLagMs = opts.maxLagMs ?? DEFAULT_MAX_LAG_MS;
    opts.metrics.followerHealth?.(() => this.healthy);
  }

  /**
   * Healthy: this replica (or the leader, for a standby) vouches for what is cached; never once
   * stopped (it vouches for nothing from then on). What the TTL decision reads (signals.ts) and
   * `wikiedge_change_follower_up` says when scraped.
   */
  get healthy(): boolean {
    return !this.stopped && !this.behind && this.lastVouched !== undefined && this.opts.now() - this.lastVouched < this.opts.unhealthyAfterMs;
  }

  get isLeader(): boolean {
    return this.leader;
  }

  /** How far behind the wiki's present the last poll ended (seconds; the leader only). */
  get lagSeconds(): number | undefined {
    return this.leader && this.behindMs !== undefined ? this.behindMs / 1000 : undefined;
  }

  start(): void {
    // Polls start every pollMs (a slow poll is followed by the next at once, not pollMs later):
    // a change waits half an interval on average plus the poll itself (docs/BENCHMARKS.md,
    // "Follower").
    const tick = () => {
      if (this.stopped) return;
      const began = performance.now();
      this.running = this.pollOnce()
        .catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'change follower: poll failed unexpectedly'))
        .finally(() => {
          this.running = undefined;
          const wait = this.more ? 0 : Math.max(0, this.opts.pollMs - (performance.now() - began));
          if (!this.stopped) this.timer = setTimeout(tick, wait);
        });
    };
    tick();
  }

  /** Stops polling (once: a second call waits for the first). */
  stop(): Promise<void> {
    return (this.stopping ??= this.stopOnce());
  }

  private async stopOnce(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.leader) await this.opts.lease.release();
    this.leader = false;
    // Neither up nor leader any more: the gauges said the last poll's values for as long as the
    // registry was scraped (a standby's lag is 0: change-metrics.ts state).
    this.report();
    await this.opts.stopped?.(this.lastVouched);
  }

  /** One poll: the lease, then rows since the cursor (leader) or the leader's word (standby). */
  async pollOnce(): Promise<void> {
    const now = this.opts.now();
    this.more = false;
    try {
      // Every replica keys answers by the wiki's namespace names, not only the one that follows.
      if (!this.currentNamespaces) await this.loadNamespaces();
      const wasLeader = this.leader;
      const asked = performance.now();
      this.leader = (await this.opts.lease.hold()) === true;
      if (this.leader) this.leaseRenewedAt = asked;
      if (this.leader) {
        // Taken (again): the cursor in the store is the truth, another replica may have moved it.
        if (!wasLeader) {
          this.state = undefined;
          // What an earlier lead saw fail is no proof now: another leader may have passed it.
          this.apiErrorAt = undefined;
        }
        await this.follow(now);
        this.opts.metrics.poll('ok');
      } else {
        this.state = undefined;
        this.behindMs = undefined;
        this.vouchedByLeader(cursorFromStored(await this.opts.cursors.load()));
        this.opts.metrics.poll('standby');
      }
    } catch (err) {
      this.opts.metrics.poll('error');
      if (this.healthy || this.lastVouched === undefined) this.opts.log.warn({ err: String(err) }, 'change follower: the wiki (or Redis) could not be asked');
    }
    await this.checkStalled(now);
    this.report();
  }

  /**
   * The leader: resume or start the cursor, read the rows after it, apply them, save the cursor.
   * It vouches only when the poll ended within the bound of the wiki's present; behind by more,
   * a gap and the wiki's newest row.
   */
  private async follow(now: number): Promise<void> {
    this.leaseLost = false;
    await this.holdingLease(() => this.lead(now));
  }

  /**
   * Runs `work` with the lease renewed every LEASE_RENEW_MS: a poll's resume, its pages and its
   * applies (a mass block's per-user purges, a batch into a slow Redis) may each outlast the
   * lease, and renewed only between pages another replica took it meanwhile, started from the
   * cursor never saved, met the same slow step, and lost it in turn: nobody vouched again
   * (test/in-process/change-follower-keeps-its-lease-through-a-long-apply.test.ts). A renewal
   * that fails sets leaseLost once the lease may have passed to another replica (renewLease).
   */
  private async holdingLease(work: () => Promise<void>): Promise<void> {
    let renewing: Promise<void> | undefined;
    const timer = setInterval(() => {
      renewing ??= this.renewLease()
        .then(() => undefined)
        .finally(() => {
          renewing = undefined;
        });
    }, LEASE_RENEW_MS);
    timer.unref();
    try {
      await work();
    } finally {
      clearInterval(timer);
      await renewing;
    }
  }

  /**
   * Renews the lease: true while this replica still holds it. Held by another replica: lost at
   * once. Unknown (Redis slow or down): lost once the last renewal that succeeded is as old as
   * the lease (Lease.durationMs, less one renewal interval for the clocks): before that no other
   * replica can have taken it, and a renewal that only timed out behind a long purge had thrown
   * the poll away, cursor unsaved, to meet the same purge at the next
   * (test/in-process/change-follower-keeps-its-lease-through-a-slow-renewal.test.ts).
   */
  private async renewLease(): Promise<boolean> {
    if (this.leaseLost) return false;
    const asked = performance.now();
    const held = await this.opts.lease.hold().catch(() => undefined);
    if (held === true) {
      this.leaseRenewedAt = asked;
      return true;
    }
    const duration = this.opts.lease.durationMs;
    if (held === false || duration === undefined || performance.now() - this.leaseRenewedAt >= duration - LEASE_RENEW_MS) this.leaseLost = true;
    return !this.leaseLost;
  }

  /** The leader's poll (follow), with its lease held. */
  private async lead(now: number): Promise<void> {
    if (!this.state) this.state = await this.resume(now);
    const read = await this.readNewRows();
    if (this.leaseLost) {
      // Another replica follows now, from the stored cursor: no gap and no cursor from this one.
      this.leader = false;
      this.state = undefined;
      return;
    }
    if (read.behindMs > this.maxLagMs) {
      this.opts.log.warn(
        { gap: 'behind', lagSeconds: read.behindMs / 1000, maxLagSeconds: this.maxLagMs / 1000, rows: read.rows },
        'change follower: the wiki`s rows outran it; it jumps to the newest row',
      );
      this.behind = true;
      this.behindMs = read.behindMs;
      try {
        this.state = await this.restart('behind', this.opts.now());
      } catch (err) {
        // Not jumped: the standbys must not go on vouching on this replica's last word (the
        // replica that took the lease meanwhile writes its own).
        if (!this.leaseLost) await this.opts.cursors.save({ ...this.toCursor(undefined), behind: true, ...this.owedMark() }).catch(() => undefined);
        throw err;
      }
      // Jumped to the newest row, the gap covering every row before it.
      read.behindMs = 0;
      read.reached = true;
    }
    this.behindMs = read.behindMs;
    this.more = read.more;
    // Stopped before its cursor (MAX_PAGES_PER_POLL spent on rows inserted late in the window):
    // nothing after the cursor was read, so this poll vouches for nothing, whatever the lag of the
    // rows it stopped at; the next poll goes on at once
    // (test/in-process/change-follower-vouches-only-once-it-reads-past-its-cursor.test.ts).
    this.behind = !read.reached;
    // The lease is renewed per poll, and one page may take as long as the wiki takes to answer:
    // another replica may have taken the lease meanwhile and follow from the stored cursor. Its
    // cursor is not written over with this one's (test/in-process/change-follower-lease-lost-during-a-poll.test.ts).
    if (!(await this.renewLease())) {
      this.leader = false;
      this.state = undefined;
      return;
    }
    // Applied here, but not everywhere yet: the standbys, which read the cursor, and this
    // replica's health say so until the owed purges are carried; the cursor moves on (the
    // purges are carried as they are owed, none read again)
    // (test/in-process/change-follower-vouches-for-nothing-while-its-purges-are-owed.test.ts).
    const owed = read.reached && this.opts.owesPurges?.() === true;
    if (owed !== this.owedWhenPolled) {
      this.owedWhenPolled = owed;
      if (owed) this.opts.log.warn('change follower: what it applied has not reached the shared tier yet; it vouches for nothing until it has');
    }
    if (!read.reached || owed) {
      this.behind = true;
      await this.opts.cursors.save({ ...this.toCursor(undefined), behind: true, ...this.owedMark() });
      return;
    }
    const polledAt = this.opts.now();
    await this.opts.cursors.save(this.toCursor(polledAt));
    this.lastVouched = polledAt;
    this.stalledGapTaken = false;
  }

  /**
   * The cursor's mark of purges owed (Cursor.owedBy) when this process owes any, whatever the
   * poll read: rows of the late window applied by a poll that did not reach its end are taken as
   * seen by whoever resumes the cursor, and a gap's own expiry may be owed too.
   */
  private owedMark(): { owedBy?: string } {
    return this.opts.owesPurges?.() === true ? { owedBy: this.owner } : {};
  }

  /** A standby is vouched for by the leader's last poll that vouched (its cursor's polledAt). */
  private vouchedByLeader(cursor: Cursor | undefined): void {
    this.behind = cursor?.behind === true;
    const at = cursor?.polledAt;
    if (at === undefined) return;
    const polledAt = Math.min(at, this.opts.now());
    if (this.lastVouched === undefined || polledAt > this.lastVouched) this.lastVouched = polledAt;
    if (this.healthy) this.stalledGapTaken = false;
  }

  /** Nobody vouched for longer than the fallback TTL: once per outage, everything expires. */
  private async checkStalled(now: number): Promise<void> {
    const since = this.lastVouched ?? this.startedAt;
    if (this.stalledGapTaken || now - since <= this.opts.gapAfterMs) return;
    this.stalledGapTaken = true;
    await this.gap('stalled', now).catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'change follower: the stalled gap could not be applied'));
  }

  private report(): void {
    this.opts.metrics.state({
      healthy: this.healthy,
      leader: this.leader,
      lastSuccessMs: this.lastVouched,
      cursorLagSeconds: this.lagSeconds,
    });
  }

  private async gap(reason: GapReason, at: number): Promise<void> {
    this.opts.metrics.gap(reason);
    this.opts.log.warn({ gap: reason }, 'change follower: it cannot vouch that it saw every change; everything cached before now is refreshed at its next use');
    await this.opts.expire(at, reason);
  }

  private async loadNamespaces(): Promise<void> {
    const answer = await this.ask('action=query&meta=siteinfo&siprop=namespaces|namespacealiases&format=json&formatversion=2');
    const query = (answer as { query?: Parameters<typeof namespacesFromSiteinfo>[0] }).query;
    if (!query?.namespaces) throw new Error('siteinfo: no namespaces in the answer');
    this.currentNamespaces = namespacesFromSiteinfo(query);
    this.opts.namespaces(this.currentNamespaces);
  }

  /**
   * The cursor to follow from: the stored one if it can be trusted, else (a gap) the wiki's
   * newest row. A cursor not polled lately is checked against the oldest row the wiki still has.
   */
  private async resume(now: number): Promise<State> {
    const raw = await this.opts.cursors.load();
    const stored = cursorFromStored(raw);
    if (!stored) {
      if (raw !== undefined) this.opts.log.warn({ cursor: JSON.stringify(raw).slice(0, 200) }, 'change follower: the stored cursor could not be read');
      return this.restart('cursor-lost', now);
    }
    // Another follower's purges owed, of rows behind the cursor: they may never reach the shared
    // tier from its process, and no poll from here reads those rows again
    // (test/in-process/change-follower-taking-over-from-a-leader-that-owed-purges-takes-a-gap.test.ts).
    // Its own: still owed here (it vouches for nothing until they are carried), or carried.
    if (stored.owedBy !== undefined && stored.owedBy !== this.owner) return this.restart('owed', now);
    const state = stateOf(stored);
    const polledAt = stored.polledAt ?? state.pos.s * 1000;
    if (now - polledAt <= RESUME_CHECK_MS) return state;
    const answer = (await this.ask(`${RC_POSITIONS_QUERY}&rcdir=newer&rclimit=1`)) as RcAnswer;
    const first = rowsOf(answer)[0];
    // The oldest row, or where the wiki stopped at one it will not show (readNewRows).
    const next = answer.continue?.rccontinue;
    const oldest = first ? { s: seconds(first.timestamp), id: first.rcid } : next !== undefined ? positionOfContinue(next) : undefined;
    // The cursor's own row (or one before it) is still there: nothing after it was purged.
    if (oldest && oldest.s > state.pos.s) return this.restart('rc-purged', now);
    return state;
  }

  /**
   * A gap, then the newest row the wiki has now, never one dated ahead of its clock (rows before
   * it are covered by the gap). The rows of the late window before it (at most SEEN_MAX, newest
   * first) and any dated ahead are read once and taken as seen, not applied: the gap covers
   * them, and a row inserted late and dated in that window is still applied at the next poll.
   * Positions only are asked for (RC_POSITIONS_QUERY): a row the wiki cannot list does not stop it.
   */
  private async restart(reason: GapReason, now: number): Promise<State> {
    let server: number | undefined;
    const rows: Position[] = [];
    let complete = false;
    let cont = '';
    for (let page = 0; page * 500 <= SEEN_MAX; page++) {
      const end = server !== undefined ? `&rcend=${isoOf(server - LATE_WINDOW_MS / 1000)}` : '';
      const answer = (await this.ask(`${RC_POSITIONS_QUERY}&rcdir=older&rclimit=${page === 0 ? 1 : 'max'}&curtimestamp=1${end}${cont}`)) as RcAnswer;
      const list = rowsOf(answer);
      server ??= answer.curtimestamp !== undefined ? seconds(answer.curtimestamp) : Math.floor(now / 1000);
      for (const row of list) rows.push({ s: seconds(row.timestamp), id: row.rcid });
      const next = answer.continue?.rccontinue;
      if (!next) {
        complete = true;
        break;
      }
      if (list.length === 0) {
        // Stopped at a row the wiki will not show (readNewRows): the gap covers it; taken as
        // seen, and on past it (older: the same second, a lower id, or before).
        const at = positionOfContinue(next);
        if (at === undefined) throw new Error(`recentchanges: a page without rows whose continuation (${next.slice(0, 40)}) cannot be read`);
        rows.push(at);
        cont = `&rccontinue=${encodeURIComponent(`${tsMw(at.s)}|${at.id - 1}`)}`;
        continue;
      }
      cont = `&rccontinue=${encodeURIComponent(next)}`;
    }
    const present = server!;
    // Never ahead of the wiki's clock (a row dated in the future would hide the rows before it).
    const newest = rows.find((r) => r.s <= present);
    const pos = newest ?? { s: present, id: 0 };
    const windowStart = { s: pos.s - LATE_WINDOW_MS / 1000, id: 0 };
    const last = rows.at(-1);
    let floor = complete || !last || cmp(last, windowStart) < 0 ? windowStart : last;
    if (cmp(floor, pos) > 0) floor = pos;
    const seen = new Map<number, number>();
    for (const r of rows) if (cmp(r, floor) > 0) seen.set(r.id, r.s);
    // The gap first, then the jump: a jump kept covers every row it skips, while a jumped cursor
    // without its gap skipped them unseen with the follower still vouching
    // (test/in-process/change-follower-restart-whose-cursor-is-not-saved.test.ts). Once the gap
    // is taken the jump is kept, saved or not: the next poll saves it (a follower whose saves
    // kept failing took a gap at every poll otherwise). Its instant is now, after the reads: an
    // answer fetched before a row jumped over and stored while they went on was stored after
    // `now`, and a gap dated then would have left it vouched for.
    await this.gap(reason, Math.max(now, this.opts.now()));
    this.state = { pos, floor, seen };
    // A replica that lost the lease meanwhile leaves the cursor to the one that took it.
    if (this.leaseLost) return this.state;
    // The gap's own expiry owed (the same master down): marked so, or a replica resuming this
    // cursor would vouch while it is.
    const owed = this.owedMark();
    await this.opts.cursors.save({ ...this.toCursor(undefined), ...(owed.owedBy !== undefined && { behind: true, ...owed }) }).catch((err: unknown) => {
      this.opts.log.warn({ err: String(err) }, 'change follower: its cursor could not be saved after a gap; the next poll saves it');
    });
    return this.state;
  }

  /**
   * One poll's reading: from the late window's floor, page after page (rccontinue), until the
   * last row, the page budget, or a row dated in the wiki's future. Rows after the cursor are
   * applied unless seen (a row dated ahead, applied before); rows in the window only when not
   * seen (inserted late). Batches are applied as they fill; the cursor moves past a batch once
   * it was applied. `reached`: the poll read past the cursor it started from, or to the last row.
   *
   * A row the wiki cannot list: MediaWiki answers a page holding a row it fails to render (a log
   * row whose parameters it cannot read: the log type of an extension since removed) with an API
   * error (`internal_api_error_*`) instead of rows, every time, and a poll that failed there
   * asked the same page again at every poll, its cursor never moving. A page that fails with an
   * API error answer where the previous poll failed with one (or where a row is known unlistable)
   * is read again with rclimit narrowed by halves down to 1: the rows before the failing one are
   * applied, and that row, found by its position (RC_POSITIONS_QUERY: no row content to fail on),
   * is passed as a row the wiki will not show (a `row-unreadable` gap, once)
   * (test/in-process/a-row-the-wiki-cannot-list-does-not-stop-the-follower.test.ts). A network
   * error, a timeout or a 5xx fails the poll as before: no row is passed for those.
   */
  private async readNewRows(): Promise<{ behindMs: number; more: boolean; rows: number; reached: boolean }> {
    const st = this.state!;
    const seen = new Map(st.seen);
    let pos = st.pos;
    let from: Position = st.floor;
    let batch: Change[] = [];
    let batchSeen: [number, number][] = [];
    /** The batch holds a row dated in the wiki's future not seen before: a clock gap at its commit. */
    let ahead = false;
    let server: number | undefined;
    let late = 0;
    let rows = 0;
    let ended = false;
    let clockChecked = false;
    /** The reading has met a row dated in the wiki's future (every row after it is dated ahead too). */
    let pastAhead = false;
    /** Rows still read after the first row dated ahead before the poll ends. */
    let aheadRowsLeft = 0;
    /** Set while narrowing to a row the wiki cannot list: one of the `within` rows from `from` fails; `limit` is the next page's rclimit. */
    let narrow: { within: number; limit: number } | undefined;
    /** This poll met an API error answer and narrowed past it: any other it meets is narrowed at once. */
    let narrowing = false;
    /** Rows this poll found unlistable that were not known to be. */
    let passedNew = 0;
    /** A page of rows was read while narrowing: the error this poll met is some row's, not every page's. */
    let listedSinceError = false;
    /** This poll pinned a row as unlistable and passed it (known or not). */
    let passedInPoll = false;
    const commit = async () => {
      if (batch.length > 0) await this.opts.apply(batch);
      // A row dated ahead applied: its gap before it is seen, whatever fails later in this poll
      // (a page after it); failing, the row is read and applied again, and the gap taken then.
      if (ahead) {
        await this.gap('clock', this.opts.now());
        ahead = false;
      }
      for (const [id, s] of batchSeen) seen.set(id, s);
      this.state = { pos, floor: st.floor, seen };
      batch = [];
      batchSeen = [];
    };
    /**
     * A row read or passed at `at`: whether it is dated in the wiki's future (after the cursor
     * the poll started from), and the count of rows read after the first such row (readNewRows).
     */
    const dated = (at: Position, pageLength: number): boolean => {
      const future = server !== undefined && at.s * 1000 > server * 1000 + CLOCK_SLACK_MS && cmp(at, st.pos) > 0;
      if (pastAhead) aheadRowsLeft--;
      else if (future) {
        pastAhead = true;
        aheadRowsLeft = pageLength;
      }
      return future;
    };
    /**
     * On past a row the wiki will not show or cannot list, at `at` (after `from`): what it changed
     * no tag can say, so a gap (once: it is then seen), and the cursor past it.
     */
    /** True when the row took a gap (it was not seen before). */
    const pass = async (at: Position, detail: Record<string, unknown>, message: string): Promise<boolean> => {
      const unseen = !wasSeen(seen, at);
      if (unseen) {
        await commit();
        await this.gap('row-unreadable', this.opts.now());
        this.opts.log.warn({ ...detail, rcid: at.id, timestamp: isoOf(at.s) }, message);
        // Seen from now on, whatever fails later in this poll: read again, it takes no second gap.
        seen.set(at.id, at.s);
        this.state = { pos, floor: st.floor, seen };
      }
      from = at;
      rows++;
      // Counted as a row read (its gap covers one dated ahead too: no clock gap of its own).
      dated(at, this.pageRows);
      if (cmp(at, pos) > 0 && !(server !== undefined && at.s * 1000 > server * 1000 + CLOCK_SLACK_MS)) pos = at;
      return unseen;
    };
    const UNLISTABLE = 'change follower: the wiki cannot list a row (an API error); a gap, and on past it';
    /** A known unlistable row right after the rows a narrowed page reads (`after`, its last): passed without asking again. */
    let knownNext: { after: Position; row: Position } | undefined;
    /** No known unlistable row before this position (the last the pre-check's positions named). */
    let noneKnownBefore: Position | undefined;
    const started = performance.now();
    const budget = this.opts.pollBudgetMs ?? POLL_BUDGET_MS;
    // The budget counts only once the reading is past the cursor: the window's re-read (about
    // WINDOW_PAGES pages of rows already seen) may take all of it on a slow wiki, and a poll that
    // stopped there would never move the cursor, whatever the rows waiting after it
    // (test/in-process/change-follower-keeps-up-with-a-slow-busy-wiki.test.ts).
    const past = () => cmp(from, st.pos) > 0;
    const namespaces = this.opts.latestNamespaces?.() ?? this.currentNamespaces;
    let held = started;
    /** The rows up to the first row dated ahead are applied: a page after it that fails ends the poll. */
    let aheadCommitted = false;
    /** It did (its API error, if it was one, narrowed at the next poll: apiErrorAt kept). */
    let failedAhead = false;
    try {
      for (let page = 0; page < MAX_PAGES_PER_POLL && !(pastAhead && aheadRowsLeft <= 0) && (!past() || performance.now() - started < budget); page++) {
        // A poll reads at least past its cursor however slow the wiki's pages: the lease is renewed
        // as it goes, so that no other replica takes it and follows too meanwhile; one lost stops
        // the poll (its cursor is left to the new leader: follow).
        if (this.leaseLost) break;
        if (performance.now() - held >= LEASE_RENEW_MS) {
          if (!(await this.renewLease())) break;
          held = performance.now();
        }
        if (narrow === undefined && knownNext !== undefined && cmp(from, knownNext.after) === 0) {
          // The narrowed page read every row before the known one: on past it, nothing asked.
          const row = knownNext.row;
          knownNext = undefined;
          await pass(row, {}, UNLISTABLE);
          continue;
        }
        knownNext = undefined;
        if (narrow === undefined && (noneKnownBefore === undefined || cmp(from, noneKnownBefore) >= 0) && this.unlistableAfter(from)) {
          // A row known unlistable lies ahead (every poll reads the late window again): the page is
          // asked to end before it, and it is passed without asking for it again.
          const ahead = await this.positionsAfter(from, undefined);
          server ??= ahead.server;
          const known = ahead.positions.findIndex((at) => wasSeen(this.unlistable, at));
          if (known === 0) {
            await pass(ahead.positions[0]!, {}, UNLISTABLE);
            continue;
          }
          if (known > 0) {
            narrow = { within: known, limit: known };
            knownNext = { after: ahead.positions[known - 1]!, row: ahead.positions[known]! };
          } else noneKnownBefore = ahead.positions[ahead.positions.length - 1];
        }
        const cont = `${tsMw(from.s)}|${from.id + 1}`;
        const limit = narrow?.limit;
        const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=${limit ?? 'max'}&curtimestamp=1&rccontinue=${cont}`)) as RcAnswer;
        if (answer.error !== undefined) {
          // Once is no proof (a database error of the moment answers so too): the poll fails as
          // before, and the next one, failing here again, narrows. A database's or a load
          // limit's error never is (TRANSIENT_API_ERRORS), nor are more rows than a poll passes.
          if (TRANSIENT_API_ERRORS.test(answer.error.code ?? '') || passedNew >= MAX_UNLISTABLE_PER_POLL) throw errorOf(answer.error);
          if (!narrowing && !this.mayNarrow(from)) {
            this.apiErrorAt = from;
            throw errorOf(answer.error);
          }
          narrowing = true;
          const error = { code: answer.error.code, info: answer.error.info?.slice(0, 200) };
          const found = await this.positionsAfter(from, limit);
          server ??= found.server;
          const positions = found.positions;
          if (positions.length === 0) throw errorOf(answer.error);
          const known = positions.findIndex((at) => wasSeen(this.unlistable, at));
          if (positions.length === 1 || known === 0) {
            // Pinned down: the first row from here is the one the wiki cannot list.
            const at = positions[0]!;
            if (cmp(at, from) <= 0) throw new Error(`recentchanges: the row the wiki cannot list (${isoOf(at.s)}|${at.id}) is not after the cursor`);
            // Only when the error is this row's: a page of rows read while narrowing, a row passed
            // so already in this poll, or a row after it that lists. An error every page answers (a
            // deploy that breaks comments or tags for all rows) is no row's: the poll fails, as
            // before, and no listable row is passed.
            if (known !== 0 && !listedSinceError && !passedInPoll && !(await this.rowsListAfter(at))) throw errorOf(answer.error);
            this.unlistable.set(at.id, at.s);
            // Only a row that takes a gap counts: one seen before (applied, then unrenderable) costs nothing.
            if (await pass(at, error, UNLISTABLE)) passedNew++;
            passedInPoll = true;
            narrow = undefined;
            continue;
          }
          // A row known unlistable ends the page before it; otherwise one of these rows fails it:
          // the first half is asked for.
          narrow = known > 0 ? { within: known + 1, limit: known } : { within: positions.length, limit: Math.ceil(positions.length / 2) };
          continue;
        }
        const list = rowsOf(answer);
        if (answer.curtimestamp !== undefined) server = seconds(answer.curtimestamp);
        if (!clockChecked) {
          clockChecked = true;
          if (await this.clockWentWrong(server)) return { behindMs: 0, more: false, rows: 0, reached: true };
        }
        const next = answer.continue?.rccontinue;
        if (list.length === 0 && next !== undefined) {
          // No row, yet a continuation: the wiki would not show the row it stopped at (an
          // ApiQueryBaseProcessRow hook refused it, or it did not fit the result:
          // ApiQueryRecentChanges::run sets the continuation at that row and breaks). Asked again,
          // it answers the same: read as the end, the follower stopped there for good and vouched.
          // What that row changed no tag can say: a gap (once: it is then seen), and on past it.
          const at = positionOfContinue(next);
          if (at === undefined || cmp(at, from) <= 0)
            throw new Error(`recentchanges: a page without rows whose continuation (${next.slice(0, 40)}) does not move on`);
          await pass(at, { rccontinue: next }, 'change follower: the wiki would not show a row; a gap, and on past it');
          if (narrow && --narrow.within <= 0) narrow = undefined;
          continue;
        }
        for (const row of list) {
          const key = { s: seconds(row.timestamp), id: row.rcid };
          from = key;
          rows++;
          // (Never one at or before the cursor: the clock stepping back less than the slack within
          // a poll would otherwise end it in the window, before its cursor.) A page as the wiki
          // answers one (rclimit=max), or as learned when this one is narrowed.
          const future = dated(key, limit === undefined ? list.length : this.pageRows);
          // Every row returned is after the floor: in the window it is news only when not seen
          // (inserted late), after the cursor unless seen (a row dated ahead, applied once). Seen
          // is the id with the same timestamp (follower-cursor.ts wasSeen): an id a failed-over
          // database reissued to a later change is news.
          if (!wasSeen(seen, key)) {
            if (cmp(key, pos) <= 0) late++;
            if (future) ahead = true;
            batch.push(changeFromRow(row, namespaces));
            batchSeen.push([row.rcid, key.s]);
          }
          // The cursor never passes a row dated in the wiki's future, and the poll ends a page of
          // rows after the first one: the rows still to come are dated before it. The rows listed
          // after it are applied all the same, each once (a `clock` gap per poll that meets a new
          // one): a host whose clock runs ahead goes on writing there, and stopping at the first
          // row the follower vouched with lag 0 while they waited unread until the wiki's clock
          // reached it (test/in-process/change-follower-row-dated-in-the-future.test.ts). Rows past
          // a page of them still wait (docs/INVALIDATION.md, known limits): every poll reads them
          // again from the window's floor until the wiki's clock reaches them, so reading on would
          // spend every poll's pages there, vouching for nothing.
          // A page's worth of rows after it (dated), whatever the late window's rows (read again
          // from its floor) took of the page that holds it: counted by rows, a narrowed page being
          // a few, past the poll's time budget too.
          if (!future && cmp(key, pos) > 0) pos = key;
        }
        // A narrowed page says nothing of the wiki's page size.
        if (next && list.length > 0 && limit === undefined) this.pageRows = page === 0 ? list.length : Math.max(this.pageRows, list.length);
        if (narrow) {
          // The failing row is among the rows left: the half of them is asked for next. None left:
          // the page no longer fails (an error of the moment), rclimit=max again.
          if (narrowing && list.length > 0) listedSinceError = true;
          narrow.within -= list.length;
          if (narrow.within <= 0) narrow = undefined;
          else narrow.limit = Math.ceil(narrow.within / 2);
        }
        // The rows up to the first dated ahead are applied before any page after it is asked for.
        if (batch.length >= APPLY_BATCH_ROWS || (pastAhead && !aheadCommitted)) {
          await commit();
          aheadCommitted = pastAhead;
        }
        if (ended || (pastAhead && aheadRowsLeft <= 0) || !next || list.length === 0) {
          ended = true;
          break;
        }
      }
    } catch (err) {
      // What a page asked for after them holds is dated ahead too, and waits for the next poll,
      // as rows past a page of them do: its failure (a 5xx, a timeout, an API error it narrows
      // at the next poll) is no failure of the poll, which read every row dated now.
      if (!aheadCommitted) throw err;
      this.opts.log.warn(
        { err: err instanceof Error ? err.message : String(err) },
        'change follower: a page after a row dated in the wiki`s future failed; it is read again at the next poll',
      );
      ended = true;
      failedAhead = true;
    }
    await commit();
    // Out of pages or time after a row dated ahead: every row not read is dated ahead too, and
    // waits as those past a page of them do (no lag, no poll at once).
    if (pastAhead) ended = true;
    // Still narrowing (the poll's pages spent): the next poll goes on narrowing where this one did.
    if (narrow === undefined && !failedAhead) this.apiErrorAt = undefined;
    if (late > 0) this.opts.log.info({ rows: late }, 'change follower: rows inserted late (dated before the cursor) applied');
    this.state = { pos, floor: nextFloor(st.floor, pos, seen, Math.min(SEEN_MAX, WINDOW_PAGES * this.pageRows)), seen };
    prune(this.state);
    for (const [id, s] of this.unlistable) if (cmp({ s, id }, this.state.floor) <= 0) this.unlistable.delete(id);
    // Stopped with rows left: the oldest row not read is after the last one read (`from`), which
    // may be in the window well before the cursor (a burst of rows inserted late, dated earlier).
    const behindMs = ended || server === undefined ? 0 : Math.max(0, (server - Math.min(from.s, pos.s)) * 1000);
    return { behindMs, more: !ended, rows, reached: ended || past() };
  }

  /**
   * Whether a page from `from` that the wiki answered with an API error is narrowed down to the
   * row that fails it (readNewRows): the previous poll failed with one there or before (the
   * window re-read from the floor pages as it did), or a row after `from` is known unlistable.
   */
  private mayNarrow(from: Position): boolean {
    return (this.apiErrorAt !== undefined && cmp(this.apiErrorAt, from) <= 0) || this.unlistableAfter(from);
  }

  /**
   * Whether the wiki lists, with the rows' content (RC_QUERY), one of the next rows after `at`
   * not known unlistable (up to PROBE_ROWS, each asked alone: a run of unlistable rows, a log
   * type's burst, is the usual shape): the error a page holding `at` answers is then `at`'s own.
   * No row after it that lists is no proof.
   */
  private async rowsListAfter(at: Position): Promise<boolean> {
    const { positions } = await this.positionsAfter(at, PROBE_ROWS);
    for (const p of positions) {
      if (wasSeen(this.unlistable, p)) continue;
      const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=1&rccontinue=${tsMw(p.s)}|${p.id}`)) as RcAnswer;
      if (answer.error === undefined && (answer.query?.recentchanges?.length ?? 0) > 0) return true;
    }
    return false;
  }

  /** Whether a row known unlistable lies after `from`. */
  private unlistableAfter(from: Position): boolean {
    for (const [id, s] of this.unlistable) if (cmp({ s, id }, from) > 0) return true;
    return false;
  }

  /**
   * The positions of the next rows after `from` (at most `limit`, else a full page), asked with
   * RC_POSITIONS_QUERY: the row content a wiki may fail to render is not asked for. A row a hook
   * refuses ends the list (readNewRows), at its position.
   */
  private async positionsAfter(from: Position, limit: number | undefined): Promise<{ positions: Position[]; server: number | undefined }> {
    const cont = `${tsMw(from.s)}|${from.id + 1}`;
    const answer = (await this.ask(`${RC_POSITIONS_QUERY}&rcdir=newer&rclimit=${limit ?? 'max'}&curtimestamp=1&rccontinue=${cont}`)) as RcAnswer;
    const list = rowsOf(answer).map((row) => ({ s: seconds(row.timestamp), id: row.rcid }));
    const next = answer.continue?.rccontinue;
    // A continuation after fewer rows than asked for (`max` is 500 at least: ApiBase::LIMIT_BIG1):
    // the wiki stopped at a row it would not show (readNewRows), which is in play too, after
    // those before it.
    const short = list.length < (limit ?? 500);
    const refused = short && next !== undefined ? positionOfContinue(next) : undefined;
    const last = list[list.length - 1];
    if (refused !== undefined && last !== undefined && cmp(refused, last) > 0) list.push(refused);
    // The wiki's clock, for a row passed before any page of rows was read: one dated in its
    // future does not take the cursor with it (pass).
    const server = answer.curtimestamp !== undefined ? seconds(answer.curtimestamp) : undefined;
    return { positions: list.length === 0 && refused ? [refused] : list, server };
  }

  /**
   * A wiki clock that went back, or a cursor ahead of it: the cursor cannot be trusted, so a gap
   * and a cursor at the wiki's present. True when that happened (this poll's rows are not used).
   */
  private async clockWentWrong(server: number | undefined): Promise<boolean> {
    if (server === undefined) return false;
    const previous = this.lastServerTime;
    this.lastServerTime = server * 1000;
    const back = previous !== undefined && server * 1000 < previous - CLOCK_SLACK_MS;
    const cursorAhead = this.state !== undefined && this.state.pos.s * 1000 > server * 1000 + CLOCK_SLACK_MS;
    if (!back && !cursorAhead) return false;
    // A new start at the wiki's present; the rows dated after it were applied already (seen).
    // Not made: the next poll must see the clock as wrong again.
    await this.restart('clock', this.opts.now()).catch((err: unknown) => {
      this.lastServerTime = previous;
      throw err;
    });
    return true;
  }

  private toCursor(polledAt: number | undefined): Cursor {
    const st = this.state!;
    return {
      v: 2,
      ts: isoOf(st.pos.s),
      id: st.pos.id,
      floorTs: isoOf(st.floor.s),
      floorId: st.floor.id,
      seen: [...st.seen].map(([id, s]) => [s, id] as const),
      ...(polledAt !== undefined ? { polledAt } : this.lastVouched !== undefined ? { polledAt: this.lastVouched } : {}),
    };
  }

  /** One request straight at the wiki (never through the cache), JSON back. */
  private async ask(query: string): Promise<unknown> {
    const res = await this.opts.upstream.request({
      method: 'GET',
      path: `${this.opts.apiPath}?${query}`,
      headers: { 'user-agent': 'wikiedge-change-follower', accept: 'application/json' },
      signal: AbortSignal.timeout(this.opts.requestTimeoutMs),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`the wiki answered ${res.statusCode}`);
    return JSON.parse(text) as unknown;
  }
}

/**
 * API errors a row never causes: the database's of the moment (DBQueryError, DBQueryTimeoutError,
 * DBConnectionError, DBReadOnlyError, … as `internal_api_error_DB*`), a read-only wiki, maxlag,
 * a rate limit, the request's own time limit (Wikimedia\RequestTimeout's exceptions). A page
 * failing so fails the poll (the short TTLs, `follower_up` 0); it is never narrowed to a row
 * that is then passed.
 */
const TRANSIENT_API_ERRORS = /^(?:internal_api_error_DB|readonly$|maxlag$|ratelimited$)|RequestTimeout|EmergencyTimeout/;

/** Rows not known before that one poll passes as unlistable, at most: past it, the poll fails (something larger is wrong). */
const MAX_UNLISTABLE_PER_POLL = 5;

/** Rows after a pinned one asked alone for proof that the error is the pinned row's (rowsListAfter). */
const PROBE_ROWS = 8;

/**
 * What each poll asks for (includes/api/ApiQueryRecentChanges.php; test/support/fake-recentchanges.ts).
 * `comment`: the edit summary says whether a Wikibase edit touched statements alone, which leaves
 * searches of its entity type cached (policy/changes.ts statementsOnlyComment); a summary hidden
 * from anonymous readers comes as `commenthidden` with no `comment` (ApiQueryRecentChanges::extractRowInfo).
 * `tags`: a revert's summary is its client's, whatever it says (changes.ts REVERT_TAGS).
 */
const RC_QUERY =
  'action=query&list=recentchanges&rcprop=title|ids|timestamp|loginfo|redirect|comment|tags&rctype=edit|new|log|categorize|external&format=json&formatversion=2';

/**
 * The same rows, positions only (rc_timestamp, rc_id): what a start, the check of an old cursor
 * (restart, resume) and the search for a row the wiki cannot list (readNewRows) need. A row whose
 * content the wiki fails to render (a log row's parameters, under `loginfo`) fails every page of
 * RC_QUERY that holds it, not these: asked with RC_QUERY, such a row among the newest stopped
 * every start (test/in-process/a-row-the-wiki-cannot-list-does-not-stop-the-follower.test.ts).
 */
const RC_POSITIONS_QUERY = 'action=query&list=recentchanges&rcprop=ids|timestamp&rctype=edit|new|log|categorize|external&format=json&formatversion=2';

/** Without Redis the cursor lives as long as the process, and so does its local tier. */
export class MemoryCursorStore implements CursorStore {
  private cursor: Cursor | undefined;
  load(): Promise<unknown> {
    return Promise.resolve(this.cursor);
  }
  save(cursor: Cursor): Promise<void> {
    this.cursor = cursor;
    return Promise.resolve();
  }
}

/** Without Redis a single process (or the one worker told to) follows. */
export const ALWAYS_LEADER: Lease = { hold: () => Promise.resolve(true), release: () => Promise.resolve() };
