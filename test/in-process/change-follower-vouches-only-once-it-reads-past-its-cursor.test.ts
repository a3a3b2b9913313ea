// A poll that stops before reaching its cursor (its page count spent on the late window's rows:
// here 450 rows inserted late, dated 30 s before the cursor, in pages of 10) read nothing of what
// came after the cursor: it does not vouch for what is cached, even though the rows it stopped at
// are within the lag bound, and the next poll goes on at once from where it stopped. The follower
// before it measured the lag from the last row it re-read and went on vouching.
import { beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAGES_PER_POLL } from '../../src/invalidation/follower.js';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const PAGE = 10;
const LATE = 450;

describe('the change follower vouches only once a poll read past its cursor', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;
  beforeEach(() => {
    wiki.pageSize = PAGE;
  });

  it('a poll whose pages all went to rows inserted late before the cursor is not healthy; the next one reads on, applies every row once, and is', async () => {
    expect(LATE / PAGE).toBeGreaterThan(MAX_PAGES_PER_POLL);
    wiki.add('History');
    f = follow();
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
    f.gaps.length = 0;
    wiki.clock += 1_000;
    f.now += 1_000;
    const lateAt = wiki.clock - 30_000;
    wiki.addMany(LATE, 'Late', () => lateAt);
    wiki.add('Edited');
    await f.follower.pollOnce();
    expect(f.applied).toHaveLength(MAX_PAGES_PER_POLL * PAGE);
    expect(f.applied).not.toContain('Edited');
    expect(f.follower.healthy).toBe(false);
    await f.follower.pollOnce();
    expect(f.applied.at(-1)).toBe('Edited');
    expect(new Set(f.applied).size).toBe(LATE + 1);
    expect(f.applied).toHaveLength(LATE + 1);
    expect(f.gaps).toEqual([]);
    expect(f.follower.healthy).toBe(true);
  });
});
