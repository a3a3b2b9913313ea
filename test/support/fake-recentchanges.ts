// A stand-in for the wiki's `list=recentchanges` (and the siteinfo namespaces the follower reads
// first), answering as MediaWiki 1.39's ApiQueryRecentChanges does for what the change follower
// asks (includes/api/ApiQueryRecentChanges.php): rows ordered by (rc_timestamp, rc_id) (ApiQueryRecentChanges.php:
// 150-155), `rcstart`/`rcend` inclusive, `rccontinue=<TS_MW>|<rc_id>` naming the first row not yet
// returned and read back as `rc_timestamp > t OR (rc_timestamp = t AND rc_id >= id)` (with
// rcdir=older: < and <=; ApiQueryRecentChanges.php:136-148, 464-466), `curtimestamp` from the
// wiki's clock. Rows are kept in that order (binary search), so that it holds a burst of 50,000
// rows and pages through it as fast as the follower asks. Rows, the clock, the page size and an
// outage are set by the test; and a ChangeFollower wired to it with an injected clock, recording
// what it applied (and in how many calls) and expired.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { RecentChangeRow } from '../../src/policy/changes.js';
import type { Namespaces } from '../../src/mediawiki/titles.js';
import { ChangeFollower, type CursorStore, type Lease, MemoryCursorStore } from '../../src/invalidation/follower.js';
import type { GapReason } from '../../src/words/outcomes.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

/** An instant as MediaWiki writes it: ISO 8601 to the second. */
export const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** TS_MW: 14 digits. */
const tsMw = (isoTs: string) => isoTs.replace(/[^0-9]/g, '').slice(0, 14);
const fromTsMw = (s: string) => `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(8, 10)}:${s.slice(10, 12)}:${s.slice(12, 14)}Z`;

const START = Date.parse('2026-03-01T12:00:00Z');
const PAGE_SIZE = 500;

export class FakeRecentChanges {
  /** Every row, in (timestamp, rcid) order: add() keeps it so; tests may empty it (length = 0). */
  readonly rows: RecentChangeRow[] = [];
  /** The wiki's clock (ms since the epoch). */
  clock = START;
  /** rclimit=max answers at most this many rows a page. */
  pageSize = PAGE_SIZE;
  /** Answer every request with a 503. */
  down = false;
  /** Answer the recentchanges queries it matches with a 503. */
  failWhen: (query: URLSearchParams) => boolean = () => false;
  /** Answer as a wiki whose list=recentchanges is ApiQueryDisabled: 200, a warning, no list. */
  disabled = false;
  /**
   * Rows an ApiQueryBaseProcessRow hook refuses: the page stops at such a row with its
   * continuation at that row (ApiQueryRecentChanges::run), so asked from it the page is empty.
   */
  refuse: (row: RecentChangeRow) => boolean = () => false;
  /** The recentchanges queries received (their search parameters). */
  readonly queries: URLSearchParams[] = [];
  private nextId = 1;

  /** A new row (an edit of `title` unless said otherwise), dated now on the wiki's clock unless `at`. */
  add(title: string, extra: Partial<RecentChangeRow> & { at?: number } = {}): RecentChangeRow {
    const { at, ...rest } = extra;
    const row: RecentChangeRow = { type: 'edit', ns: 0, title, rcid: this.nextId++, timestamp: iso(at ?? this.clock), ...rest };
    this.rows.splice(this.lowerBound(row.timestamp, row.rcid), 0, row);
    return row;
  }

  /**
   * `count` rows at once (a mass deletion, an import, a fast bot): row i an edit of
   * `${prefix} ${i}`, dated `at(i)` (ms), ids in the order given. One sort, not one splice a row.
   */
  addMany(count: number, prefix: string, at: (i: number) => number): void {
    for (let i = 0; i < count; i++) this.rows.push({ type: 'edit', ns: 0, title: `${prefix} ${i}`, rcid: this.nextId++, timestamp: iso(at(i)) });
    this.rows.sort((a, b) => compare(a.timestamp, a.rcid, b.timestamp, b.rcid));
  }

  /** As new again for the next test (no rows or queries, up, the first clock and page size); row ids go on counting. */
  reset(): void {
    this.rows.length = 0;
    this.queries.length = 0;
    this.down = false;
    this.disabled = false;
    this.refuse = () => false;
    this.failWhen = () => false;
    this.clock = START;
    this.pageSize = PAGE_SIZE;
  }

  /** Remove rows (a page deletion removes its non-log rows; $wgRCMaxAge purges old ones). */
  remove(pred: (row: RecentChangeRow) => boolean): void {
    for (let i = this.rows.length - 1; i >= 0; i--) if (pred(this.rows[i]!)) this.rows.splice(i, 1);
  }

  /** The index of the first row at or after (ts, id). */
  private lowerBound(ts: string, id: number): number {
    let lo = 0;
    let hi = this.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = this.rows[mid]!;
      if (compare(r.timestamp, r.rcid, ts, id) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.down) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    const q = new URL(req.url ?? '/', 'http://wiki').searchParams;
    if (q.get('meta') === 'siteinfo') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ query: { namespaces: { '0': { id: 0, name: '' }, '2': { id: 2, name: 'User', canonical: 'User' } }, namespacealiases: [] } }));
      return;
    }
    this.queries.push(q);
    if (this.failWhen(q)) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    if (this.disabled) {
      res.end(
        JSON.stringify({
          batchcomplete: true,
          warnings: { recentchanges: { warnings: 'The "recentchanges" module has been disabled.' } },
          curtimestamp: iso(this.clock),
        }),
      );
      return;
    }
    res.end(JSON.stringify(this.answer(q)));
  };

  private answer(q: URLSearchParams): unknown {
    const newer = q.get('rcdir') === 'newer';
    const limit = q.get('rclimit') === 'max' ? this.pageSize : Number(q.get('rclimit') ?? 10);
    const start = q.get('rcstart') ?? undefined;
    const end = q.get('rcend') ?? undefined;
    const cont = q.get('rccontinue')?.split('|');
    const contTs = cont ? fromTsMw(cont[0]!) : undefined;
    const contId = cont ? Number(cont[1]) : 0;
    const page: RecentChangeRow[] = [];
    let next: RecentChangeRow | undefined;
    if (newer) {
      // The first row at or after max(rcstart, rccontinue), then forward up to rcend.
      let i = 0;
      if (start !== undefined) i = Math.max(i, this.lowerBound(start, 0));
      if (contTs !== undefined) i = Math.max(i, this.lowerBound(contTs, contId));
      for (; i < this.rows.length; i++) {
        const r = this.rows[i]!;
        if (end !== undefined && r.timestamp > end) break;
        if (page.length === limit || this.refuse(r)) {
          next = r;
          break;
        }
        page.push(r);
      }
    } else {
      // The last row at or before min(rcstart, rccontinue), then backward down to rcend.
      let i = this.rows.length - 1;
      if (start !== undefined) i = Math.min(i, this.lowerBound(start, Number.MAX_SAFE_INTEGER) - 1);
      if (contTs !== undefined) i = Math.min(i, this.lowerBound(contTs, contId + 1) - 1);
      for (; i >= 0; i--) {
        const r = this.rows[i]!;
        if (end !== undefined && r.timestamp < end) break;
        if (page.length === limit || this.refuse(r)) {
          next = r;
          break;
        }
        page.push(r);
      }
    }
    return {
      batchcomplete: true,
      ...(next && { continue: { rccontinue: `${tsMw(next.timestamp)}|${next.rcid}`, continue: '-||' } }),
      ...(q.get('curtimestamp') && { curtimestamp: iso(this.clock) }),
      query: { recentchanges: page },
    };
  }
}

/** recentchanges' order: timestamp (ISO strings of one form compare as instants), then rcid. */
function compare(ts1: string, id1: number, ts2: string, id2: number): number {
  return ts1 < ts2 ? -1 : ts1 > ts2 ? 1 : id1 - id2;
}

export interface FollowerUnderTest {
  readonly follower: ChangeFollower;
  /** The titles of every change applied, in order. */
  readonly applied: string[];
  /** The tags of every change applied, in order. */
  readonly appliedTags: string[][];
  /** How many changes each apply call carried (one call: one invalidation, signals.ts). */
  readonly applyCalls: number[];
  /** Every gap: its reason and the instant before which everything expired. */
  readonly gaps: { reason: GapReason; before: number }[];
  /** The gateway's clock (ms): tests move it. */
  now: number;
  close(): Promise<void>;
}

export interface FollowerSetup {
  readonly cursors?: CursorStore;
  readonly lease?: Lease;
  readonly now?: number;
  readonly pollMs?: number;
  readonly unhealthyAfterMs?: number;
  readonly gapAfterMs?: number;
  readonly maxLagMs?: number;
  readonly pollBudgetMs?: number;
  readonly latestNamespaces?: () => Namespaces;
  readonly owesPurges?: () => boolean;
  /** Who owes its owed purges (FollowerOptions.ownerId): each follower under test is its own replica unless given one. */
  readonly ownerId?: string;
}

/** A wiki stand-in listening on a port, for followers to poll. */
export async function startFakeWiki(): Promise<{ wiki: FakeRecentChanges; upstream: FakeUpstream }> {
  const wiki = new FakeRecentChanges();
  return { wiki, upstream: await startFakeUpstream(wiki.handler) };
}

/** A ChangeFollower polling `url`, driven by the test (pollOnce) with its own clock. */
export function followerOf(url: string, setup: FollowerSetup = {}): FollowerUnderTest {
  const upstream = new Upstream({ origin: new URL(url), connectTimeoutMs: 1_000, responseTimeoutMs: 2_000, connections: 2 });
  let closing: Promise<void> | undefined;
  const out: FollowerUnderTest = {
    follower: undefined as unknown as ChangeFollower,
    applied: [],
    appliedTags: [],
    applyCalls: [],
    gaps: [],
    now: setup.now ?? Date.parse('2026-03-01T12:00:00Z'),
    close: async () => {
      closing ??= out.follower.stop().then(() => upstream.close());
      await closing;
    },
  };
  const follower = new ChangeFollower({
    upstream,
    apiPath: '/w/api.php',
    pollMs: setup.pollMs ?? 1_000,
    unhealthyAfterMs: setup.unhealthyAfterMs ?? 10_000,
    gapAfterMs: setup.gapAfterMs ?? 60_000,
    ...(setup.maxLagMs !== undefined && { maxLagMs: setup.maxLagMs }),
    ...(setup.latestNamespaces && { latestNamespaces: setup.latestNamespaces }),
    ...(setup.owesPurges && { owesPurges: setup.owesPurges }),
    ownerId: setup.ownerId ?? randomUUID(),
    // Polls end by their page count, not by how busy the machine is: tests count polls.
    pollBudgetMs: setup.pollBudgetMs ?? 600_000,
    requestTimeoutMs: 2_000,
    now: () => out.now,
    log: pino({ level: 'silent' }),
    metrics: new ChangeSignalMetrics(new Registry()),
    cursors: setup.cursors ?? new MemoryCursorStore(),
    lease: setup.lease ?? { hold: () => Promise.resolve(true), release: () => Promise.resolve() },
    apply: (changes) => {
      out.applyCalls.push(changes.length);
      for (const c of changes) out.applied.push(c.tags.find((t) => t.startsWith('p:'))?.slice(2) ?? '?');
      for (const c of changes) out.appliedTags.push([...c.tags]);
      return Promise.resolve();
    },
    expire: (before, reason) => {
      out.gaps.push({ reason, before });
      return Promise.resolve();
    },
    namespaces: () => undefined,
  });
  (out as { follower: ChangeFollower }).follower = follower;
  return out;
}
