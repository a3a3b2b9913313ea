/**
 * The change follower: polls the wiki's `list=recentchanges` (straight at the wiki, never through
 * the cache) every WIKIEDGE_RC_POLL_MS and turns every row into invalidations (changes.ts). It
 * catches what PURGEs do not carry: log events (blocks, rights, protections, merges, imports),
 * changes made through other servers of a multi-server wiki, and PURGEs lost while the gateway
 * was away (MediaWiki never retries one).
 *
 * The cursor (research notes §2.3): neither rc_id nor rc_timestamp alone is safe, since log rows
 * are inserted after the edit's answer with the log's earlier timestamp, categorize rows may come
 * hours late with the triggering revision's time, and many rows share a second. So the follower
 * keeps the newest (timestamp, id) it saw and asks again from OVERLAP_MS before it, dropping the
 * rc ids it has seen inside that window. `rctype` names `external` too (Wikibase client changes
 * are not in the default), and no namespace filter is used (it hides rows with a hidden action).
 * The cursor is kept where it survives the follower (CursorStore: Redis with replicas), and only
 * one replica follows at a time (Lease: a Redis lease with takeover).
 *
 * When the follower cannot vouch that it saw every change, nothing cached before is vouched for
 * any more (Gap → expire: refreshed at next use, still a fallback when the wiki fails):
 * - cursor-lost: no cursor at start (a new follower, or Redis restarted);
 * - clock: the wiki's clock (curtimestamp) went back, or the cursor is ahead of it;
 * - rc-purged: the cursor is older than the oldest row the wiki still has ($wgRCMaxAge);
 * - stalled: no successful poll for longer than the fallback TTL (the wiki or the path to it
 *   down; a multi-server wiki may have changed meanwhile).
 * While it is not healthy (no successful poll for a few intervals) the gateway's TTL defaults
 * fall back to the short ones (signals.ts).
 */
import type { Logger } from 'pino';
import type { Upstream } from '../upstream.js';
import { type Change, changeFromRow, type RecentChangeRow } from './changes.js';
import { type Namespaces, namespacesFromSiteinfo } from './titles.js';

/** How far before the newest row seen each poll asks again: late inserts land in it. */
export const OVERLAP_MS = 120_000;
/** At most this many pages of rows per poll; the rest is read at the next. */
const MAX_PAGES_PER_POLL = 20;
/** The wiki's clock may wobble this much before it counts as going back. */
const CLOCK_SLACK_MS = 5_000;
/** A cursor this old is checked against the oldest row the wiki still has. */
const OLD_CURSOR_MS = 24 * 3600_000;

export interface Cursor {
  /** The newest row's timestamp (ISO 8601, the wiki's clock) and rc id. */
  readonly ts: string;
  readonly id: number;
  /** rc ids seen within OVERLAP_MS of ts. */
  readonly seen: readonly number[];
}

export interface CursorStore {
  load(): Promise<Cursor | undefined>;
  save(cursor: Cursor): Promise<void>;
}

/** Whether this process follows now (only one replica at a time). */
export interface Lease {
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
  /** No successful poll for this long: not healthy (the TTL defaults fall back). */
  readonly unhealthyAfterMs: number;
  /** No successful poll for this long: a gap (everything cached before expires). */
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
  private cursor: Cursor | undefined;
  private loaded = false;
  private lastSuccess: number | undefined;
  private lastServerTime: number | undefined;
  private stalledGapTaken = false;
  private leader = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private namespacesLoaded = false;
  private readonly startedAt: number;

  constructor(private readonly opts: FollowerOptions) {
    this.startedAt = opts.now();
  }

  /** Healthy: this replica (or the leader, for a standby) vouches for what is cached. */
  get healthy(): boolean {
    return this.lastSuccess !== undefined && this.opts.now() - this.lastSuccess < this.opts.unhealthyAfterMs;
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
  }

  /** One poll: lease, then rows since the cursor (or the standby's health from the leader). */
  async pollOnce(): Promise<void> {
    const now = this.opts.now();
    this.leader = await this.opts.lease.hold();
    if (!this.leader) {
      // Another replica follows and publishes; this one is vouched for by it.
      this.lastSuccess = now;
      this.opts.metrics.poll('standby');
      this.report();
      return;
    }
    try {
      if (!this.namespacesLoaded) await this.loadNamespaces();
      if (!this.loaded) await this.loadCursor(now);
      await this.readNewRows();
      this.lastSuccess = this.opts.now();
      this.stalledGapTaken = false;
      this.opts.metrics.poll('ok');
    } catch (err) {
      this.opts.metrics.poll('error');
      const since = this.lastSuccess ?? this.startedAt;
      if (this.healthy || this.lastSuccess === undefined) this.opts.log.warn({ err: String(err) }, 'change follower: the wiki could not be polled');
      if (!this.stalledGapTaken && now - since > this.opts.gapAfterMs) {
        this.stalledGapTaken = true;
        await this.gap('stalled', now);
      }
    }
    this.report();
  }

  private report(): void {
    const serverNow = this.lastServerTime;
    const cursorMs = this.cursor ? Date.parse(this.cursor.ts) : undefined;
    this.opts.metrics.state({
      healthy: this.healthy,
      leader: this.leader,
      lastSuccessMs: this.lastSuccess,
      cursorLagSeconds: serverNow !== undefined && cursorMs !== undefined ? Math.max(0, (serverNow - cursorMs) / 1000) : undefined,
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
    if (query) {
      this.currentNamespaces = namespacesFromSiteinfo(query);
      this.opts.namespaces(this.currentNamespaces);
    }
    this.namespacesLoaded = true;
  }

  /** The stored cursor, or (none: a gap) the newest row the wiki has now. */
  private async loadCursor(now: number): Promise<void> {
    const stored = await this.opts.cursors.load();
    this.loaded = true;
    if (stored) {
      this.cursor = stored;
      return;
    }
    const answer = (await this.ask(`${RC_QUERY}&rcdir=older&rclimit=1&curtimestamp=1`)) as RcAnswer;
    const newest = answer.query?.recentchanges?.[0];
    this.cursor = newest ? { ts: newest.timestamp, id: newest.rcid, seen: [newest.rcid] } : { ts: answer.curtimestamp ?? new Date(now).toISOString(), id: 0, seen: [] };
    await this.opts.cursors.save(this.cursor);
    await this.gap('cursor-lost', now);
  }

  private async readNewRows(): Promise<void> {
    const cursor = this.cursor!;
    const start = new Date(Date.parse(cursor.ts) - OVERLAP_MS).toISOString();
    const seen = new Set(cursor.seen);
    const changes: Change[] = [];
    const returned: { ts: string; id: number }[] = [];
    let newest = { ts: cursor.ts, id: cursor.id };
    let cont: { rccontinue?: string; continue?: string } | undefined;
    for (let page = 0; page < MAX_PAGES_PER_POLL; page++) {
      const more = cont?.rccontinue ? `&rccontinue=${encodeURIComponent(cont.rccontinue)}&continue=${encodeURIComponent(cont.continue ?? '')}` : '';
      const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=max&curtimestamp=1&rcstart=${encodeURIComponent(start)}${more}`)) as RcAnswer;
      if (answer.error) throw new Error(`recentchanges: ${answer.error.code ?? 'error'}: ${answer.error.info ?? ''}`);
      await this.checkClock(answer.curtimestamp);
      for (const row of answer.query?.recentchanges ?? []) {
        returned.push({ ts: row.timestamp, id: row.rcid });
        if (row.timestamp > newest.ts || (row.timestamp === newest.ts && row.rcid > newest.id)) newest = { ts: row.timestamp, id: row.rcid };
        if (seen.has(row.rcid)) continue;
        seen.add(row.rcid);
        changes.push(changeFromRow(row, this.currentNamespaces));
      }
      cont = answer.continue;
      if (!cont?.rccontinue) break;
    }
    if (changes.length > 0) await this.opts.apply(changes);
    // The next poll asks from OVERLAP_MS before the newest row: the ids it will see again are
    // those returned now within that window.
    const horizon = Date.parse(newest.ts) - OVERLAP_MS;
    const kept = returned.filter((r) => Date.parse(r.ts) >= horizon).map((r) => r.id);
    this.cursor = { ts: newest.ts, id: newest.id, seen: kept };
    await this.opts.cursors.save(this.cursor);
    await this.checkOldCursor();
  }

  /** A wiki clock that goes back, or a cursor ahead of it: the cursor cannot be trusted. */
  private async checkClock(curtimestamp: string | undefined): Promise<void> {
    const server = curtimestamp ? Date.parse(curtimestamp) : NaN;
    if (!Number.isFinite(server)) return;
    const previous = this.lastServerTime;
    this.lastServerTime = server;
    const cursorAhead = this.cursor && Date.parse(this.cursor.ts) > server + OVERLAP_MS;
    if ((previous !== undefined && server < previous - CLOCK_SLACK_MS) || cursorAhead) {
      this.cursor = { ts: new Date(server).toISOString(), id: 0, seen: [] };
      await this.gap('clock', this.opts.now());
    }
  }

  /** A cursor older than the oldest row the wiki still has: rows were purged unseen. */
  private async checkOldCursor(): Promise<void> {
    const server = this.lastServerTime;
    if (!this.cursor || server === undefined || server - Date.parse(this.cursor.ts) < OLD_CURSOR_MS) return;
    const answer = (await this.ask(`${RC_QUERY}&rcdir=newer&rclimit=1`)) as RcAnswer;
    const oldest = answer.query?.recentchanges?.[0];
    if (oldest && oldest.timestamp > this.cursor.ts) {
      this.cursor = { ts: oldest.timestamp, id: oldest.rcid, seen: [] };
      await this.gap('rc-purged', this.opts.now());
    }
  }

  private currentNamespaces: Namespaces | undefined;

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

/** What each poll asks for (research notes §2.1). */
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
