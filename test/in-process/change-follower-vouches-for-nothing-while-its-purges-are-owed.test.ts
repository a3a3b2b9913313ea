// The leader applies a poll's rows, but the shared tier does not take the purges (a Redis
// Cluster master down that holds part of a tag's index, a sweep that timed out): this replica
// purged itself and owes the rest (cache/tiered-storage.ts owe), while the other replicas still
// serve what the rows changed. Before, the poll saved its cursor as read to the end and vouched:
// the standbys read it, reported healthy, and stored new answers under the followed TTL. Now a
// poll vouches for nothing while any purge is owed (its cursor says `behind`), and vouches again,
// reading no row twice, once they are carried.
import { describe, expect, it } from 'vitest';
import { cursorFromStored, MemoryCursorStore } from '../../src/invalidation/follower.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

describe('the change follower vouches for nothing while the purges it applied are owed to the shared tier', () => {
  const { wiki, follow } = followerOnFakeWiki();

  it('owed: the leader and a standby reading its cursor are not healthy; carried: both are, and no row is applied twice', async () => {
    let owed = false;
    const cursors = new MemoryCursorStore();
    const leader = follow({ cursors, owesPurges: () => owed });
    const standby = follow({ cursors, lease: { hold: () => Promise.resolve(false), release: () => Promise.resolve() } });
    await leader.follower.pollOnce();
    await standby.follower.pollOnce();
    expect(leader.follower.healthy).toBe(true);
    expect(standby.follower.healthy).toBe(true);
    // The first start of a cursor is a gap (nothing cached was followed); none after it.
    leader.gaps.length = 0;

    wiki.clock += 1_000;
    leader.now += 1_000;
    standby.now += 1_000;
    wiki.add('Edited');
    owed = true;
    await leader.follower.pollOnce();
    expect(leader.applied).toEqual(['Edited']);
    expect(leader.follower.healthy).toBe(false);
    expect(cursorFromStored(await cursors.load())?.behind).toBe(true);
    await standby.follower.pollOnce();
    expect(standby.follower.healthy).toBe(false);

    // Still owed at the next poll, with nothing new: still nothing vouched for.
    leader.now += 1_000;
    await leader.follower.pollOnce();
    expect(leader.follower.healthy).toBe(false);

    owed = false;
    leader.now += 1_000;
    standby.now += 1_000;
    await leader.follower.pollOnce();
    expect(leader.follower.healthy).toBe(true);
    expect(leader.applied).toEqual(['Edited']);
    await standby.follower.pollOnce();
    expect(standby.follower.healthy).toBe(true);
    expect(leader.gaps).toEqual([]);
  });

  it('a follower without a shared tier (no owesPurges) vouches as before', async () => {
    wiki.add('Page');
    const f = follow();
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
  });
});
