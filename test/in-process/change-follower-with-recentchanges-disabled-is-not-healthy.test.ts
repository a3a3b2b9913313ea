// A wiki that disabled list=recentchanges ($wgAPIListModules['recentchanges'] = ApiQueryDisabled)
// answers 200 with a warning and no `recentchanges` at all (an empty list is `[]`). The follower
// took that for a wiki with no new rows: healthy, lag 0, the long followed TTLs in force, while it
// read no change at all. Such an answer is now a failed poll: unhealthy after
// WIKIEDGE_RC_UNHEALTHY_AFTER, a `stalled` gap after the short TTL.
import { describe, expect, it } from 'vitest';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

describe('list=recentchanges disabled on the wiki', () => {
  const { wiki, follow } = followerOnFakeWiki();

  it('from the start: the follower never vouches', async () => {
    wiki.disabled = true;
    const f = follow({ unhealthyAfterMs: 10_000, gapAfterMs: 60_000 });
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(false);
  });

  it('once followed: unhealthy, then a stalled gap', async () => {
    const f = follow({ unhealthyAfterMs: 10_000, gapAfterMs: 60_000 });
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
    f.gaps.length = 0;
    wiki.disabled = true;
    wiki.clock += 11_000;
    f.now += 11_000;
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(false);
    wiki.clock += 50_000;
    f.now += 50_000;
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['stalled']);
  });
});
