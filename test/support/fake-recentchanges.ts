// A stand-in for the wiki's `list=recentchanges` (and the siteinfo namespaces the follower reads
// first), answering as MediaWiki 1.39's ApiQueryRecentChanges does for what the change follower
// asks (includes/api/ApiQueryRecentChanges.php): rows ordered by (rc_timestamp, rc_id), `rcstart` inclusive,
// `rccontinue=<TS_MW>|<rc_id>` naming the first row not yet returned, `curtimestamp` from the
// wiki's clock. Rows, the clock, the page size and an outage are set by the test; and a
// ChangeFollower wired to it with an injected clock, recording what it applied and expired.
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { RecentChangeRow } from '../../src/policy/changes.js';
import { ChangeFollower, type CursorStore, type GapReason, type Lease, MemoryCursorStore } from '../../src/invalidation/follower.js';
import { ChangeSignalMetrics } from '../../src/observe/metrics.js';
import { Upstream } from '../../src/upstream/upstream.js';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';

/** An instant as MediaWiki writes it: ISO 8601 to the second. */
export const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** TS_MW: 14 digits. */
const tsMw = (isoTs: string) => isoTs.replace(/[^0-9]/g, '').slice(0, 14);
const fromTsMw = (s: string) => `${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(8, 10)}:${s.slice(10, 12)}:${s.slice(12, 14)}Z`;

export class FakeRecentChanges {
  readonly rows: RecentChangeRow[] = [];
  /** The wiki's clock (ms since the epoch). */
  clock = Date.parse('2026-03-01T12:00:00Z');
  /** rclimit=max answers at most this many rows a page. */
  pageSize = 500;
  /** Answer every request with a 503. */
  down = false;
  /** The recentchanges queries received (their search parameters). */
  readonly queries: URLSearchParams[] = [];
  private nextId = 1;

  /** A new row (an edit of `title` unless said otherwise), dated now on the wiki's clock unless `at`. */
  add(title: string, extra: Partial<RecentChangeRow> & { at?: number } = {}): RecentChangeRow {
    const { at, ...rest } = extra;
    const row: RecentChangeRow = { type: 'edit', ns: 0, title, rcid: this.nextId++, timestamp: iso(at ?? this.clock), ...rest };
    this.rows.push(row);
    return row;
  }

  /** Remove rows (a page deletion removes its non-log rows; $wgRCMaxAge purges old ones). */
  remove(pred: (row: RecentChangeRow) => boolean): void {
    for (let i = this.rows.length - 1; i >= 0; i--) if (pred(this.rows[i]!)) this.rows.splice(i, 1);
  }

  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.down) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down');
      return;
    }
    const q = new URL(req.url ?? '/', 'http://wiki').searchParams;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    if (q.get('meta') === 'siteinfo') {
      res.end(JSON.stringify({ query: { namespaces: { '0': { id: 0, name: '' }, '2': { id: 2, name: 'User', canonical: 'User' } }, namespacealiases: [] } }));
      return;
    }
    this.queries.push(q);
    res.end(JSON.stringify(this.answer(q)));
  };

  private answer(q: URLSearchParams): unknown {
    const newer = q.get('rcdir') === 'newer';
    const limit = q.get('rclimit') === 'max' ? this.pageSize : Number(q.get('rclimit') ?? 10);
    const key = (r: RecentChangeRow) => `${r.timestamp}|${String(r.rcid).padStart(12, '0')}`;
    let rows = [...this.rows].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    if (!newer) rows.reverse();
    const start = q.get('rcstart');
    if (start) rows = rows.filter((r) => (newer ? r.timestamp >= start : r.timestamp <= start));
    const cont = q.get('rccontinue');
    if (cont) {
      const [ts, id] = cont.split('|');
      const t = fromTsMw(ts!);
      const n = Number(id);
      rows = rows.filter((r) => (newer ? r.timestamp > t || (r.timestamp === t && r.rcid >= n) : r.timestamp < t || (r.timestamp === t && r.rcid <= n)));
    }
    const page = rows.slice(0, limit);
    const next = rows[limit];
    return {
      batchcomplete: true,
      ...(next && { continue: { rccontinue: `${tsMw(next.timestamp)}|${next.rcid}`, continue: '-||' } }),
      ...(q.get('curtimestamp') && { curtimestamp: iso(this.clock) }),
      query: { recentchanges: page },
    };
  }
}

export interface FollowerUnderTest {
  readonly follower: ChangeFollower;
  /** The titles of every change applied, in order. */
  readonly applied: string[];
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
    requestTimeoutMs: 2_000,
    now: () => out.now,
    log: pino({ level: 'silent' }),
    metrics: new ChangeSignalMetrics(new Registry()),
    cursors: setup.cursors ?? new MemoryCursorStore(),
    lease: setup.lease ?? { hold: () => Promise.resolve(true), release: () => Promise.resolve() },
    apply: (changes) => {
      for (const c of changes) out.applied.push(c.tags.find((t) => t.startsWith('p:'))?.slice(2) ?? '?');
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
