// A slow, busy wiki: rows come steadily (20 a second) and each page of recentchanges takes longer
// than the poll's budget. Every poll starts at the late window's floor, re-reading about 1,000
// rows it has already seen (two pages) before it reaches its cursor. The follower before it
// checked the budget before every page: each poll read only those seen rows, its cursor never
// moved, it reported healthy (the lag measured from the last row re-read), and a `behind` gap
// expired the whole cache every 40 s or so, with no row applied between. A poll now always reads
// past its cursor: every row is applied, at the poll after it was written, with no gap.
import { describe, expect, it } from 'vitest';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const ROWS_PER_SECOND = 20;

describe('the change follower keeps up with a slow, busy wiki', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;

  it('20 rows a second, every page slower than the budget: each poll applies the rows written since the last, none is skipped, no gap', async () => {
    let t = wiki.clock - 70_000;
    let n = 0;
    const written: string[] = [];
    /** `ms` of the wiki's traffic, ending at t + ms, spread evenly. */
    const traffic = (ms: number) => {
      const rows = (ms / 1000) * ROWS_PER_SECOND;
      const t0 = t;
      const prefix = `Busy ${n++}`;
      wiki.addMany(rows, prefix, (i) => t0 + Math.floor((i * ms) / rows));
      for (let i = 0; i < rows; i++) written.push(`${prefix} ${i}`);
      t += ms;
    };
    traffic(70_000);
    // A budget of 1 ms: spent after any page, as on a wiki whose pages take seconds.
    f = follow({ pollBudgetMs: 1 });
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    f.gaps.length = 0;
    const before = written.length;
    let unhealthy = 0;
    /** Polls after which some row written before it was still not applied. */
    let lagging = 0;
    for (let s = 0; s < 120; s++) {
      traffic(1_000);
      wiki.clock += 1_000;
      f.now += 1_000;
      await f.follower.pollOnce();
      if (!f.follower.healthy) unhealthy++;
      if (f.applied.length < written.length - before) lagging++;
    }
    expect(f.gaps).toEqual([]);
    expect(f.applied).toEqual(written.slice(before));
    expect(lagging).toBe(0);
    expect(unhealthy).toBe(0);
    expect(f.follower.lagSeconds).toBeLessThanOrEqual(1);
  });
});
