// A burst (a mass deletion, an import, a fast bot: 50,000 recentchanges rows in one minute), then
// one real change: the follower applies the change within 5 polls, or takes a gap (`behind`) that
// covers it and says so; it is never healthy while its cursor is further behind the wiki's clock
// than the bound (WIKIEDGE_RC_MAX_LAG_SECONDS). The follower before it re-read from 120 s before
// its cursor at most 20 x 500 rows a poll: with 10,000 rows or more in that window its cursor
// never moved again and it went on vouching for the long TTLs.
import { describe, expect, it } from 'vitest';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const BURST = 50_000;

describe('the change follower keeps up with a burst of 50,000 rows', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;

  /** Both clocks (the wiki's and the gateway's) forward. */
  const pass = (ms: number) => {
    wiki.clock += ms;
    f.now += ms;
  };

  /** A started follower, then the burst over the minute that follows, then a rights change. */
  async function burstThenChange(maxLagMs?: number) {
    wiki.add('History');
    f = follow({ ...(maxLagMs !== undefined && { maxLagMs }) });
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    f.gaps.length = 0;
    const t0 = wiki.clock;
    wiki.addMany(BURST, 'Burst', (i) => t0 + 1_000 + Math.floor((i * 60_000) / BURST));
    pass(61_000);
    wiki.add('User:Rights changed', { type: 'log', ns: 2, logtype: 'rights', logaction: 'rights' });
    return f.now;
  }

  /**
   * How far behind the wiki's present the follower is, seen from outside: the age of the oldest
   * row neither applied nor covered by a gap (0 when there is none).
   */
  function behindSeconds(): number {
    const applied = new Set(f.applied);
    const coveredBefore = Math.max(0, ...f.gaps.map((g) => g.before));
    const oldest = wiki.rows.find((r) => !applied.has(r.title!) && Date.parse(r.timestamp) >= coveredBefore && r.title !== 'History');
    return oldest ? (wiki.clock - Date.parse(oldest.timestamp)) / 1000 : 0;
  }

  /** Polls until the real change is applied or a gap covers it; after every poll, health is checked against the lag. */
  async function pollUntilCovered(changedAt: number, boundSeconds: number): Promise<number> {
    for (let poll = 1; poll <= 5; poll++) {
      pass(1_000);
      await f.follower.pollOnce();
      if (f.follower.healthy) {
        expect(behindSeconds(), `poll ${poll}: healthy only within the bound`).toBeLessThanOrEqual(boundSeconds);
        expect(f.follower.lagSeconds!, `poll ${poll}: the lag it reports`).toBeLessThanOrEqual(boundSeconds);
      }
      if (f.applied.includes('User:Rights changed') || f.gaps.some((g) => g.before >= changedAt)) return poll;
    }
    throw new Error(`after 5 polls: neither applied nor covered by a gap (${f.applied.length} rows applied, gaps ${JSON.stringify(f.gaps)})`);
  }

  it('the default bound (60 s): it reads through the burst in order and applies the change within 5 polls, each row once', async () => {
    const changedAt = await burstThenChange();
    const polls = await pollUntilCovered(changedAt, 60);
    expect(polls).toBeLessThanOrEqual(5);
    expect(f.applied.at(-1)).toBe('User:Rights changed');
    expect(f.applied).toHaveLength(BURST + 1);
    expect(new Set(f.applied).size).toBe(BURST + 1);
    expect(f.gaps).toEqual([]);
    expect(f.follower.healthy).toBe(true);
    expect(f.follower.lagSeconds).toBe(0);
  });

  it('a tighter bound (10 s): a `behind` gap that covers the change, reported, and never healthy while behind', async () => {
    const changedAt = await burstThenChange(10_000);
    await pollUntilCovered(changedAt, 10);
    expect(f.gaps.map((g) => g.reason)).toEqual(['behind']);
    expect(f.gaps[0]!.before).toBeGreaterThanOrEqual(changedAt);
    // It jumped to the wiki's newest row: the next change is applied at the next poll.
    pass(1_000);
    wiki.add('After the burst');
    await f.follower.pollOnce();
    expect(f.applied.at(-1)).toBe('After the burst');
    expect(f.follower.healthy).toBe(true);
    expect(f.gaps).toHaveLength(1);
  });

  it('a poll that ends behind is not healthy, whatever an earlier poll vouched', async () => {
    // Reading is slower than the wiki writes: pages of 10 rows, 40 a poll (400 rows) and the
    // bound at 5 s. After the burst every poll falls further behind; none may vouch.
    wiki.pageSize = 10;
    try {
      wiki.add('History');
      f = follow({ maxLagMs: 5_000, unhealthyAfterMs: 60_000 });
      await f.follower.pollOnce();
      expect(f.follower.healthy).toBe(true);
      f.gaps.length = 0;
      for (let poll = 0; poll < 3; poll++) {
        const t0 = wiki.clock;
        wiki.addMany(2_000, `Round ${poll}`, (i) => t0 + Math.floor((i * 10_000) / 2_000));
        pass(10_000);
        await f.follower.pollOnce();
        if (f.follower.healthy) expect(behindSeconds()).toBeLessThanOrEqual(5);
      }
      expect(f.gaps.map((g) => g.reason)).toContain('behind');
    } finally {
      wiki.pageSize = 500;
    }
  });
});
