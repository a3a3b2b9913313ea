// A row inserted late (a log row written POSTSEND, after the edit's answer, dated when its
// request began; a transaction that took its rc_id early and committed after a later one was
// read) lands before the change follower's cursor: it is still applied, once, from the small
// window the follower reads again before its cursor, also when a burst moved the cursor on by
// more rows than a page. The window never blocks progress: a burst larger than the window is
// read through, and the next polls do not read it again.
import { beforeEach, describe, expect, it } from 'vitest';
import { WINDOW_PAGES } from '../../src/invalidation/follower.js';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

describe('the change follower applies rows inserted late, dated before its cursor', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;
  beforeEach(async () => {
    wiki.add('History');
    f = follow();
    await f.follower.pollOnce();
    f.gaps.length = 0;
  });

  it('a block log row dated 30 s before the edit it follows, inserted after the poll that read the edit', async () => {
    wiki.clock += 40_000;
    wiki.add('Edited');
    await f.follower.pollOnce();
    wiki.add('User:Blocked', { type: 'log', ns: 2, logtype: 'block', logaction: 'block', at: wiki.clock - 30_000 });
    await f.follower.pollOnce();
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Edited', 'User:Blocked']);
  });

  it('after 900 rows in one second (more than a page past the late row`s place), the late row is still applied once', async () => {
    wiki.clock += 40_000;
    const t = wiki.clock;
    wiki.addMany(900, 'Burst', () => t);
    await f.follower.pollOnce();
    expect(f.applied).toHaveLength(900);
    // Dated two seconds before the burst: behind two pages of rows already read.
    wiki.add('User:Rights', { type: 'log', ns: 2, logtype: 'rights', logaction: 'rights', at: t - 2_000 });
    await f.follower.pollOnce();
    await f.follower.pollOnce();
    expect(f.applied.filter((x) => x === 'User:Rights')).toHaveLength(1);
    expect(f.applied).toHaveLength(901);
  });

  it('the window never blocks progress: 20,000 rows in one second are read through, and not read again', async () => {
    wiki.clock += 40_000;
    const t = wiki.clock;
    wiki.addMany(20_000, 'Burst', () => t);
    // 40 pages a poll (the first row of the first is the last one seen before): two polls.
    await f.follower.pollOnce();
    await f.follower.pollOnce();
    expect(f.applied).toHaveLength(20_000);
    wiki.clock += 1_000;
    wiki.add('Next');
    const before = wiki.queries.length;
    await f.follower.pollOnce();
    expect(f.applied.at(-1)).toBe('Next');
    expect(f.applied).toHaveLength(20_001);
    // The next poll reads the window (at most WINDOW_PAGES pages of it) and the new row, not the burst.
    expect(wiki.queries.length - before).toBeLessThanOrEqual(WINDOW_PAGES + 1);
    expect(f.gaps).toEqual([]);
  });
});
