/**
 * The change follower: polls the wiki's `list=recentchanges` (straight at the wiki, never through
 * the cache) every WIKIEDGE_RC_POLL_MS and turns every row into invalidations (changes.ts). It
 * catches what PURGEs do not carry: log events (blocks, rights, protections, merges, imports),
 * changes made through other servers of a multi-server wiki, and PURGEs lost while the gateway
 * was away (MediaWiki never retries one).
 *
 * The cursor (test/in-process/change-follower-cursor.test.ts): neither rc_id nor rc_timestamp alone is safe, since log rows
 * are inserted after the edit's answer with the log's earlier timestamp, categorize rows may come
 * hours late with the triggering revision's time, and many rows share a second. So the follower
 * keeps the newest (timestamp, id) it saw and asks again from OVERLAP_MS before it, dropping the
 * rc ids it has seen inside that window. `rctype` names `external` too (Wikibase client changes
 * are not in the default), and no namespace filter is used (it hides rows with a hidden action).
 * The cursor is kept where it survives the follower (CursorStore: Redis with replicas), and only
 * one replica follows at a time (Lease: a Redis lease with takeover). The follower that holds the
 * lease writes the cursor after every poll with the instant of that poll (`polledAt`): the other
 * replicas read it to know whether somebody still vouches for what they cache.
 *
 * When the follower cannot vouch that it saw every change, nothing cached before is vouched for
 * any more (Gap → expire: refreshed at next use, still a fallback when the wiki fails), and it
 * starts again from the wiki's newest row:
 * - cursor-lost: no cursor at start (a new follower, or Redis restarted empty);
 * - clock: the wiki's clock (curtimestamp) went back, the cursor is ahead of it, or a row is
 *   dated in the wiki's future (a server of the wiki with its clock ahead: the rows of one with
 *   its clock behind could fall before the overlap unseen);
 * - rc-purged: the cursor is older than the oldest row the wiki still has ($wgRCMaxAge, 90 days
 *   by default, or a table rebuilt): checked whenever the follower resumes a cursor that was not
 *   polled in the last OVERLAP_MS (a start, a takeover, an outage);
 * - stalled: nobody vouched (no successful poll here, no fresh cursor from the replica that
 *   follows) for longer than the fallback TTL: the wiki or the path to it was down, or Redis
 *   was, and a multi-server wiki may have changed meanwhile.
 * While nobody has vouched for a few intervals the gateway's TTL defaults fall back to the short
 * ones (signals.ts).
 */
import type { Logger } from 'pino';
import type { Upstream } from '../upstream/upstream.js';
import { type Change, changeFromRow, type RecentChangeRow } from '../policy/changes.js';
import { type Namespaces, namespacesFromSiteinfo } from '../mediawiki/titles.js';

/** How far before the newest row seen each poll asks again: late inserts land in it. */
export const OVERLAP_MS = 120_000;
/** At most this many pages of rows per poll; the rest is read at the next. */
const MAX_PAGES_PER_POLL = 20;
/** The wiki's clock may wobble this much before it counts as going back, or a row as ahead. */
export const CLOCK_SLACK_MS = 5_000;

export interface Cursor {
  /** The newest row's timestamp (ISO 8601, the wiki's clock) and rc id. */
  readonly ts: string;
  readonly id: number;
  /** rc ids seen within OVERLAP_MS of ts. */
  readonly seen: readonly number[];
  /** When the follower last polled successfully (ms since the epoch, its own clock). */
  readonly polledAt?: number;
}

export interface CursorStore {
  load(): Promise<Cursor | undefined>;
  save(cursor: Cursor): Promise<void>;
}

/** Whether this process follows now (only one replica at a time). */
export interface Lease {
  /** Taken or renewed: true; held by another replica, or unknown (Redis down): false. */
  hold(): Promise<boolean>;
  release(): Promise<void>;
}

export type GapReason = 'cursor-lost' | 'clock' | 'rc-purged' | 'stalled';

export interface FollowerMetrics {
  poll(outcome: 'ok' | 'error' | 'standby'): void;
  gap(reason: GapReason): void;
  state(state: { healthy: boolean; leader: boolean; lastSuccessMs: number | undefined; cursorLagSeconds: number | undefined }): void;
}

export interface FollowerOptions {
  readonly upstream: Upstream;
  readonly apiPath: string;
  readonly pollMs: number;
  /** Nobody vouched for this long: not healthy (the TTL defaults fall back). */
  readonly unhealthyAfterMs: number;
  /** Nobody vouched for this long: a gap (everything cached before expires). */
  readonly gapAfterMs: number;
  readonly requestTimeoutMs: number;
  readonly now: () => number;
  readonly log: Logger;
  readonly metrics: FollowerMetrics;
  readonly cursors: CursorStore;
  readonly lease: Lease;
  /** Invalidate what the changes name, everywhere. */
  readonly apply: (changes: readonly Change[]) => Promise<void>;
  /** Nothing stored before `before` is vouched for any more, everywhere. */
  readonly expire: (before: number, reason: GapReason) => Promise<void>;
  readonly namespaces: (ns: Namespaces) => void;
}

interface RcAnswer {
  curtimestamp?: string;
  continue?: { rccontinue?: string; continue?: string };
  query?: { recentchanges?: RecentChangeRow[] };
  error?: { code?: string; info?: string };
}

export class ChangeFollower {
  /** The cursor this replica follows from; undefined until it leads and has read the store. */
  private cursor: Cursor | undefined;
  /** When somebody (this replica, or the one that follows) last vouched for every change. */
  private lastVouched: number | undefined;
  private lastServerTime: number | undefined;
  private stalledGapTaken = false;
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private currentNamespaces: Namespaces | undefined;
  private readonly startedAt: number;

  constructor(private readonly opts: FollowerOptions) {
    this.startedAt = opts.now();
  }

  /** Healthy: this replica (or the leader, for a standby) vouches for what is cached. */
  get healthy(): boolean {
    return this.lastVouched !== undefined && this.opts.now() - this.lastVouched < this.opts.unhealthyAfterMs;
  }

  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.pollOnce()
        .catch((err: unknown) => this.opts.log.error({ err: String(err) }, 'change follower: poll failed unexpectedly'))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = setTimeout(tick, this.opts.pollMs);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    if (this.leader) await this.opts.lease.release();
    this.leader = false;
  }

  /** One poll: the lease, then rows since the cursor (leader) or the leader's word (standby). */
  async pollOnce(): Promise<void> {
    const now = this.opts.now();
    try {
      // Every replica keys answers by the wiki's namespace names, not only the one that follows.
      if (!this.currentNamespaces) await this.loadNamespaces();
      const wasLeader = this.leader;
      this.leader = await this.opts.lease.hold();
      if (this.leader) {
        // Taken (again): the cursor in the store is the truth, another replica may have moved it.
        if (!wasLeader) this.cursor = undefined;
        await this.follow(now);
        this.opts.metrics.poll('ok');
      } else {
        this.cursor = undefined;
        this.vouchedByLeader(await this.opts.cursors.load());
        this.opts.metrics.poll('standby');
      }
    } catch (err) {
      this.opts.metrics.poll('error');
      if (this.healthy || this.lastVouched === undefined) this.opts.log.warn({ err: String(err) }, 'change follower: the wiki (or Redis) could not be asked');
    }
    await this.checkStalled(now);
    this.report();
  }

  /** The leader: resume or start the cursor, read every new row, apply them, save the cursor. */
  private async follow(now: number): Promise<void> {
    if (!this.cursor) this.cursor = await this.resume(now);
    await this.readNewRows();
    const polledAt = this.opts.now();
    this.cursor = { ...this.cursor, polledAt };
    await this.opts.cursors.save(this.cursor);
    this.lastVouched = polledAt;
    this.stalledGapTaken = false;
  }

  /** A standby is vouched for by the leader's last successful poll (its cursor's polledAt). */
  private vouchedByLeader(cursor: Cursor | undefined): void {
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
    await this.gap('stalled', now).catch((err: unknown) =>
      this.opts.log.error({ err: String(err) }, 'change follower: the stalled gap could not be applied'),
    );
  }

  private report(): void {
    const serverNow = this.lastServerTime;
    const cursorMs = this.cursor ? Date.parse(this.cursor.ts) : undefined;
    this.opts.metrics.state({
      healthy: this.healthy,
      leader: this.leader,
      lastSuccessMs: this.lastVouched,
      cursorLagSeconds: this.leader && serverNow !== undefined && cursorMs !== undefined ? Math.max(0, (serverNow - cursorMs) / 1000) : undefined,
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
  private async resume(now: number): Promise<Cursor> {
    const stored = await this.opts.cursors.load();
    if (!stored) return this.restart('cursor-lost', now);
    const polledAt = stored.polledAt ?? Date.parse(stored.ts);
    if (now - polledAt <= OVERLAP_MS) return stored;
    const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=1`)) as RcAnswer;
    if (answer.error) throw new Error(`recentchanges: ${answer.error.code ?? 'error'}: ${answer.error.info ?? ''}`);
    const oldest = answer.query?.recentchanges?.[0];
    // The cursor's own row (or one before it) is still there: nothing after it was purged.
    if (oldest && oldest.timestamp > stored.ts) return this.restart('rc-purged', now);
    return stored;
  }

  /** A gap, then the newest row the wiki has now (rows before it are covered by the gap). */
  private async restart(reason: GapReason, now: number): Promise<Cursor> {
    const answer = (await this.ask(`${RC_QUERY}&rcdir=older&rclimit=1&curtimestamp=1`)) as RcAnswer;
    if (answer.error) throw new Error(`recentchanges: ${answer.error.code ?? 'error'}: ${answer.error.info ?? ''}`);
    const server = answer.curtimestamp ?? isoSeconds(now);
    const newest = answer.query?.recentchanges?.[0];
    // Never ahead of the wiki's clock (a row dated in the future would hide the rows before it).
    const cursor = newest && newest.timestamp <= server ? { ts: newest.timestamp, id: newest.rcid, seen: [newest.rcid] } : { ts: server, id: 0, seen: [] };
    await this.opts.cursors.save(cursor);
    await this.gap(reason, now);
    return cursor;
  }

  private async readNewRows(): Promise<void> {
    const cursor = this.cursor!;
    const start = isoSeconds(Date.parse(cursor.ts) - OVERLAP_MS);
    const seen = new Set(cursor.seen);
    const changes: Change[] = [];
    const returned: { ts: string; id: number }[] = [];
    let newest = { ts: cursor.ts, id: cursor.id };
    let ahead = false;
    let server: string | undefined;
    let cont: { rccontinue?: string; continue?: string } | undefined;
    for (let page = 0; page < MAX_PAGES_PER_POLL; page++) {
      const more = cont?.rccontinue ? `&rccontinue=${encodeURIComponent(cont.rccontinue)}&continue=${encodeURIComponent(cont.continue ?? '')}` : '';
      const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=max&curtimestamp=1&rcstart=${encodeURIComponent(start)}${more}`)) as RcAnswer;
      if (answer.error) throw new Error(`recentchanges: ${answer.error.code ?? 'error'}: ${answer.error.info ?? ''}`);
      server = answer.curtimestamp ?? server;
      if (page === 0 && (await this.clockWentWrong(answer.curtimestamp))) return;
      for (const row of answer.query?.recentchanges ?? []) {
        returned.push({ ts: row.timestamp, id: row.rcid });
        if (row.timestamp > newest.ts || (row.timestamp === newest.ts && row.rcid > newest.id)) newest = { ts: row.timestamp, id: row.rcid };
        if (seen.has(row.rcid)) continue;
        seen.add(row.rcid);
        if (server !== undefined && Date.parse(row.timestamp) > Date.parse(server) + CLOCK_SLACK_MS) ahead = true;
        changes.push(changeFromRow(row, this.currentNamespaces));
      }
      cont = answer.continue;
      if (!cont?.rccontinue) break;
    }
    if (changes.length > 0) await this.opts.apply(changes);
    if (ahead) await this.gap('clock', this.opts.now());
    // Never ahead of the wiki's clock: a row dated in the future stays in `seen` (applied once)
    // instead of moving the window past rows still to come.
    if (server !== undefined && newest.ts > server) newest = { ts: server, id: 0 };
    // The next poll asks from OVERLAP_MS before the newest row: the ids it will see again are
    // those returned now within that window.
    const horizon = Date.parse(newest.ts) - OVERLAP_MS;
    const kept = returned.filter((r) => Date.parse(r.ts) >= horizon).map((r) => r.id);
    this.cursor = { ts: newest.ts, id: newest.id, seen: kept };
  }

  /**
   * A wiki clock that went back, or a cursor ahead of it: the cursor cannot be trusted, so a gap
   * and a cursor at the wiki's present. True when that happened (this poll's rows are not used).
   */
  private async clockWentWrong(curtimestamp: string | undefined): Promise<boolean> {
    const server = curtimestamp ? Date.parse(curtimestamp) : NaN;
    if (!Number.isFinite(server)) return false;
    const previous = this.lastServerTime;
    this.lastServerTime = server;
    const back = previous !== undefined && server < previous - CLOCK_SLACK_MS;
    const cursorAhead = this.cursor !== undefined && Date.parse(this.cursor.ts) > server + CLOCK_SLACK_MS;
    if (!back && !cursorAhead) return false;
    // Rows already applied stay seen: those dated after the new present are not news again.
    this.cursor = { ts: isoSeconds(server), id: 0, seen: this.cursor?.seen ?? [] };
    await this.gap('clock', this.opts.now());
    return true;
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
 * An instant as MediaWiki writes timestamps (ISO 8601 to the second, `Z`): cursors are compared
 * as strings, and `2026-01-01T00:00:00.500Z` sorts before `2026-01-01T00:00:00Z`.
 */
function isoSeconds(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** What each poll asks for (includes/api/ApiQueryRecentChanges.php; test/support/fake-recentchanges.ts). */
const RC_QUERY =
  'action=query&list=recentchanges&rcprop=title|ids|timestamp|loginfo|redirect&rctype=edit|new|log|categorize|external&format=json&formatversion=2';

/** Without Redis the cursor lives as long as the process, and so does its local tier. */
export class MemoryCursorStore implements CursorStore {
  private cursor: Cursor | undefined;
  load(): Promise<Cursor | undefined> {
    return Promise.resolve(this.cursor);
  }
  save(cursor: Cursor): Promise<void> {
    this.cursor = cursor;
    return Promise.resolve();
  }
}

/** Without Redis a single process (or the one worker told to) follows. */
export const ALWAYS_LEADER: Lease = { hold: () => Promise.resolve(true), release: () => Promise.resolve() };
