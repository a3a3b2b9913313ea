// A recentchanges row the wiki's API fails on: with rcprop=...|loginfo|..., MediaWiki answers a
// page that holds a log row whose parameters it cannot read (the log type of an extension since
// removed, params no longer unserializable) with an error, `internal_api_error_*`, instead of
// rows, every time it is asked. The follower failed the whole page, asked again from the same
// rccontinue at every poll, and never moved its cursor: the rows before and after that row were
// never applied, and nobody vouched again. Now a position that keeps failing is read row by row
// down to the failing row (rclimit narrowed to 1): the rows before it are applied, that row
// takes a `row-unreadable` gap (as a row the wiki will not show:
// change-follower-passes-a-row-the-wiki-will-not-show.test.ts), and the rows after it are
// applied. The follower's start (and its check of an old cursor) asks for positions only
// (rcprop=ids|timestamp), which such a row does not fail.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RecentChangeRow } from '../../src/policy/changes.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges, type FollowerSetup, type FollowerUnderTest, followerOf } from '../support/fake-recentchanges.js';

/**
 * The fake wiki, except that a page of list=recentchanges asking for `loginfo` that holds a row
 * `unlistable` picks is answered as MediaWiki answers an exception while it renders a row: 200,
 * an `error` and no rows (ApiMain::substituteResultWithError).
 */
class WikiFailingOnARow {
  readonly wiki = new FakeRecentChanges();
  unlistable: (row: RecentChangeRow) => boolean = () => false;
  /** The recentchanges queries answered with an error. */
  errors = 0;
  /** The error's code: an exception while a row is rendered, or a database's of the moment. */
  code = 'internal_api_error_InvalidArgumentException';

  /** Rows a hook refuses when only their positions are asked for (rendered, the wiki fails on them first). */
  refusedWithoutLoginfo: (row: RecentChangeRow) => boolean = () => false;

  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    const q = new URL(req.url ?? '/', 'http://wiki').searchParams;
    const positionsOnly = q.get('list') === 'recentchanges' && !(q.get('rcprop') ?? '').split('|').includes('loginfo');
    this.wiki.refuse = (r) => positionsOnly && this.refusedWithoutLoginfo(r);
    let status = 200;
    let headers: Record<string, string> = {};
    const captured = {
      writeHead: (s: number, h: Record<string, string>) => {
        status = s;
        headers = h;
        return captured;
      },
      end: (body: string) => {
        if (status === 200 && q.get('list') === 'recentchanges' && (q.get('rcprop') ?? '').split('|').includes('loginfo')) {
          const rows = (JSON.parse(body) as { query?: { recentchanges?: RecentChangeRow[] } }).query?.recentchanges ?? [];
          if (rows.some((r) => this.unlistable(r))) {
            this.errors++;
            body = JSON.stringify({
              error: {
                code: this.code,
                info: '[a1b2c3] Exception caught: Invalid log params for a log type no extension defines',
                errorclass: 'InvalidArgumentException',
              },
              servedby: 'mw1',
            });
          }
        }
        res.writeHead(status, headers);
        res.end(body);
      },
    };
    this.wiki.handler(req, captured as unknown as ServerResponse);
  };
}

function onAWikiFailingOnARow() {
  const fake = new WikiFailingOnARow();
  let server: FakeUpstream | undefined;
  const started: FollowerUnderTest[] = [];
  beforeAll(async () => {
    server = await startFakeUpstream(fake.handler);
  });
  afterAll(() => server?.close());
  beforeEach(() => {
    fake.wiki.reset();
    fake.unlistable = () => false;
    fake.errors = 0;
    fake.code = 'internal_api_error_InvalidArgumentException';
    fake.refusedWithoutLoginfo = () => false;
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((f) => f.close()));
  });
  return {
    fake,
    wiki: fake.wiki,
    follow: (setup: FollowerSetup = {}) => {
      const f = followerOf(server!.url, { now: fake.wiki.clock, ...setup });
      started.push(f);
      return f;
    },
  };
}

/** A second passes for the wiki and the follower alike. */
function aSecondLater(wiki: FakeRecentChanges, f: FollowerUnderTest): void {
  wiki.clock += 1_000;
  f.now += 1_000;
}

/** `n` polls, a second apart. */
async function pollsASecondApart(wiki: FakeRecentChanges, f: FollowerUnderTest, n: number): Promise<void> {
  for (let poll = 0; poll < n; poll++) {
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
  }
}

/** A follower that read to the wiki's newest row (none), its start's gap forgotten. */
async function aFollowerUpToDate(wiki: FakeRecentChanges, follow: (setup?: FollowerSetup) => FollowerUnderTest): Promise<FollowerUnderTest> {
  const f = follow();
  await f.follower.pollOnce();
  expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
  f.gaps.length = 0;
  aSecondLater(wiki, f);
  return f;
}

describe('a row the wiki cannot list', () => {
  const { fake, wiki, follow } = onAWikiFailingOnARow();

  it('rows 1, 2, 4 and 5 are applied, row 3 takes one row-unreadable gap, and the follower stays healthy', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3, 4, 5]) wiki.add(`Row ${n}`, n === 3 ? { type: 'log', logtype: 'oldext', logaction: 'do' } : {});
    fake.unlistable = (r) => r.title === 'Row 3';
    await pollsASecondApart(wiki, f, 3);
    expect(fake.errors).toBeGreaterThan(0);
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 4', 'Row 5']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['row-unreadable']);
    expect(f.follower.healthy).toBe(true);
    // Read again in the late window at later polls: no second gap, and rows after still applied.
    wiki.add('Row 6');
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 4', 'Row 5', 'Row 6']);
    expect(f.gaps).toHaveLength(1);
    expect(f.follower.healthy).toBe(true);
  });

  it('in a full page: the rows before and after it are all applied, in few requests', async () => {
    wiki.pageSize = 500;
    const f = await aFollowerUpToDate(wiki, follow);
    const t0 = wiki.clock;
    wiki.addMany(500, 'B', (i) => t0 - 500 + i);
    fake.unlistable = (r) => r.title === 'B 300';
    wiki.clock += 1_000;
    f.now += 1_000;
    const before = wiki.queries.length;
    await pollsASecondApart(wiki, f, 3);
    expect(f.applied).toHaveLength(499);
    expect(f.applied).not.toContain('B 300');
    expect(new Set(f.applied).size).toBe(499);
    expect(f.gaps.map((g) => g.reason)).toEqual(['row-unreadable']);
    expect(f.follower.healthy).toBe(true);
    // Narrowed by halves, not row by row (500 requests).
    expect(wiki.queries.length - before).toBeLessThan(60);
    // While the row is in the late window, each poll passes it again without a second gap, and
    // without narrowing anew: it is known.
    const again = wiki.queries.length;
    await f.follower.pollOnce();
    expect(wiki.queries.length - again).toBeLessThan(4);
    expect(f.gaps).toHaveLength(1);
    expect(f.follower.healthy).toBe(true);
  });

  it('an error the wiki answers once is no gap: the next poll reads the rows', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3]) wiki.add(`Row ${n}`);
    let once = true;
    fake.unlistable = (r) => {
      if (r.title !== 'Row 2' || !once) return false;
      once = false;
      return true;
    };
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 3']);
    expect(f.gaps).toEqual([]);
    expect(f.follower.healthy).toBe(true);
  });

  it('a wiki down (503) at the same position is no reason to pass a row', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3]) wiki.add(`Row ${n}`);
    wiki.failWhen = () => true;
    await pollsASecondApart(wiki, f, 3);
    expect(f.applied).toEqual([]);
    expect(f.gaps).toEqual([]);
    wiki.failWhen = () => false;
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 3']);
    expect(f.gaps).toEqual([]);
  });

  it('a failing row that a hook refuses when only positions are asked for: the listable row before it is applied', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3]) wiki.add(`Row ${n}`);
    fake.unlistable = (r) => r.title === 'Row 2';
    fake.refusedWithoutLoginfo = (r) => r.title === 'Row 2';
    await pollsASecondApart(wiki, f, 4);
    expect(f.applied).toEqual(['Row 1', 'Row 3']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['row-unreadable']);
  });

  it('an error every page answers (comments or tags broken for all rows) is no row`s: nothing passed', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3, 4]) wiki.add(`Row ${n}`);
    fake.unlistable = () => true;
    await pollsASecondApart(wiki, f, 4);
    expect(f.applied).toEqual([]);
    expect(f.gaps).toEqual([]);
    fake.unlistable = () => false;
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 3', 'Row 4']);
    expect(f.gaps).toEqual([]);
  });

  it('a run of unlistable rows first after the cursor (a log type`s burst): each passed, the rows after applied', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (let n = 1; n <= 10; n++) wiki.add(`Row ${n}`);
    fake.unlistable = (r) => Number((r.title ?? '').slice(4)) <= 7;
    await pollsASecondApart(wiki, f, 8);
    expect(f.gaps.map((g) => g.reason)).toEqual(Array(7).fill('row-unreadable'));
    expect(f.applied).toEqual(['Row 8', 'Row 9', 'Row 10']);
    expect(f.follower.healthy).toBe(true);
  });

  it('a database`s error, however often, is no reason to pass a row', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (const n of [1, 2, 3]) wiki.add(`Row ${n}`);
    fake.code = 'internal_api_error_DBQueryTimeoutError';
    fake.unlistable = (r) => r.title === 'Row 2';
    await pollsASecondApart(wiki, f, 4);
    expect(f.applied).toEqual([]);
    expect(f.gaps).toEqual([]);
    fake.unlistable = () => false;
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Row 1', 'Row 2', 'Row 3']);
    expect(f.gaps).toEqual([]);
  });

  it('more unlistable rows than a poll passes: a few per poll, every other row applied in the end', async () => {
    const f = await aFollowerUpToDate(wiki, follow);
    for (let n = 1; n <= 20; n++) wiki.add(`Row ${n}`);
    const bad = new Set([2, 4, 6, 8, 10, 12, 14, 16].map((n) => `Row ${n}`));
    fake.unlistable = (r) => bad.has(r.title ?? '');
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    // The poll that narrows passes five at most, then fails.
    expect(f.gaps.length).toBeLessThanOrEqual(5);
    await pollsASecondApart(wiki, f, 8);
    expect(f.gaps.map((g) => g.reason)).toEqual(Array(8).fill('row-unreadable'));
    expect(f.applied).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 18, 19, 20].map((n) => `Row ${n}`));
    expect(f.follower.healthy).toBe(true);
  });

  it('the newest row when the follower starts: its start is not stopped by it', async () => {
    wiki.add('Older', { at: wiki.clock - 5_000 });
    wiki.add('Unlistable', { at: wiki.clock - 2_000 });
    fake.unlistable = (r) => r.title === 'Unlistable';
    const f = follow();
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    wiki.add('After');
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    expect(f.applied).toEqual(['After']);
    expect(f.follower.healthy).toBe(true);
  });
});
