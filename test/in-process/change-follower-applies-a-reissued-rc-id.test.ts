// A failover of the wiki's database that lost its last commits: the new primary hands the lost
// rows' rc_ids (AUTO_INCREMENT goes on from what it holds) to new changes, dated later. The
// follower had seen those ids in its late window and took the new rows for them: skipped, and its
// cursor moved past them, so what they changed stayed cached for the followed TTL. A row is seen
// only as the same id with the same timestamp (src/invalidation/follower-cursor.ts wasSeen).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';

describe('the change follower after a database failover that reissued rc_ids', () => {
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  beforeAll(async () => {
    ({ wiki, upstream: server } = await startFakeWiki());
  });
  afterAll(() => server.close());

  it('applies a row whose rc_id it saw before with another timestamp, once', async () => {
    wiki.reset();
    wiki.add('History');
    const f = followerOf(server.url, { now: wiki.clock });
    try {
      await f.follower.pollOnce();
      f.gaps.length = 0;
      wiki.clock += 10_000;
      wiki.add('Kept');
      const lost = wiki.add('Lost');
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['Kept', 'Lost']);

      // The failover: the primary that took over never had the last commit; its next change
      // takes the same rc_id, three seconds later.
      wiki.remove((r) => r.rcid === lost.rcid);
      wiki.clock += 3_000;
      wiki.add('Reissued', { rcid: lost.rcid });
      wiki.add('After');
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['Kept', 'Lost', 'Reissued', 'After']);

      // Read again in the late window at the next polls: not applied twice.
      wiki.clock += 1_000;
      await f.follower.pollOnce();
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['Kept', 'Lost', 'Reissued', 'After']);
      expect(f.gaps).toEqual([]);
    } finally {
      await f.close();
    }
  });
});
