// When the change follower cannot vouch that it saw every change it takes a gap: everything
// cached before expires (refreshed at next use), once per cause, and it goes on from the wiki's
// present. Each cause the issue names, against a recentchanges stand-in: the cursor lost, the
// wiki unreachable for longer than the fallback TTL, the wiki's clock going back or a row dated
// in its future, rows purged past the cursor ($wgRCMaxAge), and a standby nobody vouches for.
import { describe, expect, it } from 'vitest';
import { MemoryCursorStore } from '../../src/invalidation/follower.js';
import { type FollowerUnderTest, iso } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

describe('gaps of the change follower', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;

  /** Move both clocks (the wiki's and the gateway's) forward. */
  const pass = (ms: number) => {
    wiki.clock += ms;
    f.now += ms;
  };

  it('cursor lost: one gap at the first poll, the cursor at the newest row (history is not replayed)', async () => {
    wiki.add('Old 1', { at: wiki.clock - 600_000 });
    wiki.add('Old 2', { at: wiki.clock - 300_000 });
    wiki.add('Newest', { at: wiki.clock - 60_000 });
    f = follow();
    await f.follower.pollOnce();
    expect(f.gaps).toEqual([{ reason: 'cursor-lost', before: f.now }]);
    expect(f.applied).toEqual([]);
    pass(2_000);
    wiki.add('New');
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['New']);
    expect(f.gaps).toHaveLength(1);
  });

  it('the wiki unreachable for longer than the fallback TTL: unhealthy first, one gap after the TTL, nothing lost', async () => {
    f = follow({ unhealthyAfterMs: 10_000, gapAfterMs: 60_000 });
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
    f.gaps.length = 0;

    wiki.down = true;
    pass(11_000);
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(false);
    expect(f.gaps).toEqual([]);
    // Edits made meanwhile (the wiki answers others, not the follower).
    wiki.add('During the outage');
    pass(50_000);
    await f.follower.pollOnce();
    expect(f.gaps).toEqual([{ reason: 'stalled', before: f.now }]);
    pass(5_000);
    await f.follower.pollOnce();
    expect(f.gaps).toHaveLength(1);

    wiki.down = false;
    pass(1_000);
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
    expect(f.applied).toEqual(['During the outage']);

    // A second outage is a second gap.
    wiki.down = true;
    pass(61_000);
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['stalled', 'stalled']);
  });

  it('the wiki`s clock goes back: a gap, then rows dated on the new clock are applied', async () => {
    f = follow();
    wiki.add('Before');
    await f.follower.pollOnce();
    f.gaps.length = 0;
    pass(1_000);
    wiki.clock -= 600_000;
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock']);
    pass(1_000);
    wiki.add('After the clock went back');
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['After the clock went back']);
    expect(f.gaps).toHaveLength(1);
  });

  it('a row dated in the wiki`s future: applied once, one gap, and it hides no row that comes after', async () => {
    f = follow();
    await f.follower.pollOnce();
    f.gaps.length = 0;
    pass(1_000);
    wiki.add('From a server ahead', { at: wiki.clock + 3_600_000 });
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['From a server ahead']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock']);
    pass(1_000);
    wiki.add('Now');
    await f.follower.pollOnce();
    pass(1_000);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['From a server ahead', 'Now']);
    expect(f.gaps).toHaveLength(1);
  });

  it('rows purged past the cursor ($wgRCMaxAge) while nobody followed: a gap on resuming', async () => {
    const cursors = new MemoryCursorStore();
    f = follow({ cursors });
    wiki.add('Seen');
    await f.follower.pollOnce();
    await f.close();
    // 91 days later: everything up to 90 days old was purged, then more happened.
    wiki.clock += 91 * 86_400_000;
    wiki.remove((r) => Date.parse(r.timestamp) < wiki.clock - 90 * 86_400_000);
    wiki.add('Recent');
    f = follow({ cursors });
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['rc-purged']);
    pass(1_000);
    wiki.add('Next');
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Next']);
  });

  it('resuming an old cursor whose rows are all still there: no gap, every row since applied', async () => {
    const cursors = new MemoryCursorStore();
    f = follow({ cursors });
    wiki.add('Seen');
    await f.follower.pollOnce();
    await f.close();
    wiki.clock += 3_600_000;
    wiki.add('While nobody followed');
    f = follow({ cursors });
    await f.follower.pollOnce();
    expect(f.gaps).toEqual([]);
    expect(f.applied).toEqual(['While nobody followed']);
    // The oldest row was asked for once, on resuming.
    expect(wiki.queries.filter((q) => q.get('rcdir') === 'newer' && q.get('rclimit') === '1')).toHaveLength(1);
  });

  it('a standby whose leader stopped vouching: unhealthy, then one stalled gap', async () => {
    // The leader's cursor in the form before version 2 (still read: invalidation/follower.ts cursorFromStored).
    const stored: { cursor: Record<string, unknown> } = { cursor: { ts: iso(wiki.clock), id: 1, seen: [1], polledAt: wiki.clock } };
    const cursors = { load: () => Promise.resolve(stored.cursor), save: () => Promise.resolve() };
    f = follow({ cursors, lease: { hold: () => Promise.resolve(false), release: () => Promise.resolve() } });
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(true);
    expect(f.follower.isLeader).toBe(false);
    // The leader polls once more, then nothing.
    pass(1_000);
    stored.cursor = { ...stored.cursor, polledAt: f.now };
    await f.follower.pollOnce();
    pass(11_000);
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(false);
    expect(f.gaps).toEqual([]);
    pass(50_000);
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['stalled']);
    // A standby never reads recentchanges.
    expect(wiki.queries).toEqual([]);
  });

  it('a standby that cannot read the leader`s cursor (Redis down) is not vouched for', async () => {
    const cursors = { load: () => Promise.reject(new Error('redis down')), save: () => Promise.resolve() };
    f = follow({ cursors, lease: { hold: () => Promise.resolve(false), release: () => Promise.resolve() } });
    await f.follower.pollOnce();
    expect(f.follower.healthy).toBe(false);
    pass(61_000);
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['stalled']);
  });
});
