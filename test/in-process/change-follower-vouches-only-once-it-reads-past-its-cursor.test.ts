// A poll that stops before reaching its cursor (its page count spent on the late window's rows:
// here 450 rows inserted late, dated 30 s before the cursor, in pages of 10) read nothing of what
// came after the cursor: it does not vouch for what is cached, even though the rows it stopped at
// are within the lag bound, and the next poll goes on at once from where it stopped. The follower
// before it measured the lag from the last row it re-read and went on vouching.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_PAGES_PER_POLL } from '../../src/invalidation/follower.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, type FollowerUnderTest, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';

const PAGE = 10;
const LATE = 450;

describe('the change follower vouches only once a poll read past its cursor', () => {
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  let f: FollowerUnderTest;
  beforeAll(async () => {
    ({ wiki, upstream: server } = await startFakeWiki());
  });
  afterAll(() => server.close());
  beforeEach(() => {
    wiki.rows.length = 0;
    wiki.queries.length = 0;
    wiki.clock = Date.parse('2026-03-01T12:00:00Z');
    wiki.pageSize = PAGE;
  });
  afterEach(async () => {
    wiki.pageSize = 500;
    await f?.close();
  });

  it('a poll whose pages all went to rows inserted late before the cursor is not healthy; the next one reads on, applies every row once, and is', async () => {
    expect(LATE / PAGE).toBeGreaterThan(MAX_PAGES_PER_POLL);
    wiki.add('History');
    f = followerOf(server.url, { now: wiki.clock });
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
