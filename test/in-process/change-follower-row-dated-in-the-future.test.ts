// A row dated in the wiki's future (a server whose clock runs ahead) is applied once with a
// `clock` gap, and the cursor never passes it: rows dated before it are still to come. When that
// server goes on writing, its next rows are dated after the first and listed after it: each poll
// stopped reading at the first, said it had read everything (lag 0, healthy) and vouched, while
// those rows waited unread until the wiki's clock reached the first one, up to the other server's
// lead: the answers they change were served stale under the followed TTL, with nothing in the
// health or the metrics. A page's worth of rows after it is applied at once now, each once; the
// poll still ends there (rows past it wait, as a known limit: reading on, every poll would spend
// its pages on the same rows again).
import { describe, expect, it } from 'vitest';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const AHEAD_MS = 600_000;

describe('a server whose clock runs ahead, writing on', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;
  const pass = (ms: number) => {
    wiki.clock += ms;
    f.now += ms;
  };

  /**
   * A follower on pages of 4 rows whose late window holds `now` rows dated now (read again from
   * its floor at every poll: they take the start of the page that holds the first row dated
   * ahead), what it applied and its gaps cleared.
   */
  async function followingAfter(now: number, setup: Parameters<typeof follow>[0]): Promise<void> {
    wiki.pageSize = 4;
    f = follow(setup);
    await f.follower.pollOnce();
    pass(1_000);
    for (let i = 0; i < now; i++) wiki.add(`Now ${i}`);
    await f.follower.pollOnce();
    f.applied.length = 0;
    f.gaps.length = 0;
  }

  /** `n` rows from the server ahead, `Ahead 0` … , a second apart. */
  const aheadRows = (n: number, from = 0) => {
    for (let i = from; i < from + n; i++) wiki.add(`Ahead ${i}`, { at: wiki.clock + AHEAD_MS + i * 1_000 });
  };

  it('its rows after the first are applied at once, each once, and rows dated now still are', async () => {
    f = follow({ unhealthyAfterMs: 10_000 });
    await f.follower.pollOnce();
    f.gaps.length = 0;
    pass(1_000);
    wiki.add('First from the server ahead', { at: wiki.clock + AHEAD_MS });
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock']);

    pass(1_000);
    wiki.add('Second from the server ahead', { at: wiki.clock + AHEAD_MS });
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead', 'Second from the server ahead']);
    expect(f.follower.healthy).toBe(true);

    // A row dated now, listed before them, and nothing applied twice.
    pass(1_000);
    wiki.add('Now');
    await f.follower.pollOnce();
    pass(1_000);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead', 'Second from the server ahead', 'Now']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock', 'clock']);

    // The wiki's clock passes them: nothing applied again, no gap.
    pass(AHEAD_MS);
    await f.follower.pollOnce();
    expect(f.applied).toHaveLength(3);
    expect(f.gaps).toHaveLength(2);
    expect(f.follower.healthy).toBe(true);
  });

  it('rows of the late window before them (read again from its floor) take no page of theirs', async () => {
    await followingAfter(3, { unhealthyAfterMs: 10_000 });
    pass(1_000);
    aheadRows(5);
    // From the floor: [Now 0, Now 1, Now 2, Ahead 0], then [Ahead 1 … Ahead 4].
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Ahead 0', 'Ahead 1', 'Ahead 2', 'Ahead 3', 'Ahead 4']);
    expect(f.follower.healthy).toBe(true);
  });

  it('a poll out of time right after them ends as one that read them: no lag, no `behind` gap', async () => {
    // No time beyond the cursor's page: the poll stops as soon as it has read past its cursor.
    await followingAfter(3, { unhealthyAfterMs: 60_000, maxLagMs: 5_000, pollBudgetMs: 0 });
    // The other servers go quiet for longer than the lag allowed; the one ahead writes on.
    pass(10_000);
    aheadRows(6);
    await f.follower.pollOnce();
    expect(f.applied).toContain('Ahead 0');
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock']);
    expect(f.follower.healthy).toBe(true);
  });

  it('a page after the one that holds the first, failing, ends the poll as read: the rows dated now are applied', async () => {
    await followingAfter(2, { unhealthyAfterMs: 60_000 });
    pass(1_000);
    wiki.add('Now 2');
    // From the floor: [Now 0, Now 1, Now 2, Ahead 0], then [Ahead 1, Ahead 2], which fails.
    const first = wiki.add('Ahead 0', { at: wiki.clock + AHEAD_MS });
    aheadRows(2, 1);
    wiki.failWhen = (q) => q.get('rccontinue')?.endsWith(`|${first.rcid + 1}`) === true;
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Now 2', 'Ahead 0']);
    expect(f.follower.healthy).toBe(true);
    wiki.failWhen = () => false;
    pass(1_000);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Now 2', 'Ahead 0', 'Ahead 1', 'Ahead 2']);
  });

  it('a first row dated ahead that the wiki will not show (passed, not listed) ends the poll as read too', async () => {
    await followingAfter(3, { unhealthyAfterMs: 60_000, maxLagMs: 5_000, pollBudgetMs: 0 });
    pass(10_000);
    wiki.refuse = (r) => r.title === 'Ahead 0';
    aheadRows(6);
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).not.toContain('behind');
    expect(f.follower.healthy).toBe(true);
  });

  it('a run of rows ahead longer than a page: the poll ends a page after the first, and vouches', async () => {
    wiki.pageSize = 3;
    f = follow({ unhealthyAfterMs: 10_000 });
    await f.follower.pollOnce();
    f.gaps.length = 0;
    pass(1_000);
    for (let i = 0; i < 9; i++) wiki.add(`Ahead ${i}`, { at: wiki.clock + AHEAD_MS + i * 1_000 });
    await f.follower.pollOnce();
    // A page's worth of them after the first at least (two pages at most): applied; the rest wait
    // for the wiki's clock, and the poll vouches.
    const first = f.applied.length;
    expect(first).toBeGreaterThanOrEqual(3);
    expect(first).toBeLessThan(9);
    expect(f.applied).toEqual(Array.from({ length: first }, (_, i) => `Ahead ${i}`));
    expect(f.follower.healthy).toBe(true);
    pass(1_000);
    wiki.add('Now');
    await f.follower.pollOnce();
    expect(f.applied).toContain('Now');
    expect(f.follower.healthy).toBe(true);
    // Once the wiki's clock passes them, every one of them has been applied, each once.
    pass(AHEAD_MS + 10_000);
    await f.follower.pollOnce();
    const every = [...Array.from({ length: 9 }, (_, i) => `Ahead ${i}`), 'Now'];
    expect([...f.applied].sort()).toEqual(every.sort());
  });
});
