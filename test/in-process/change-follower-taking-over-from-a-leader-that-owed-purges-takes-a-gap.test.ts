// A leader that applied a poll's rows but could not get their purges into the shared tier (a
// Redis Cluster master down) saves its cursor past those rows and vouches for nothing until its
// process carries them. Another replica that took the lease meanwhile (the leader stopped, or
// lost the lease) resumed from that cursor, owed nothing itself, and vouched at its next poll:
// the rows the first leader owed were never read again, their purges were left to a process that
// may never carry them, and every replica stored under the followed TTL beside the answers those
// rows changed. A follower taking up a cursor another one saved while it owed purges now takes a
// gap (`owed`: everything cached before is refreshed at its next use); the one that owed them
// resumes its own cursor without one.
import { describe, expect, it } from 'vitest';
import { cursorFromStored, MemoryCursorStore } from '../../src/invalidation/follower.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

describe('a follower taking over a cursor saved while its leader owed purges', () => {
  const { wiki, follow } = followerOnFakeWiki();

  it('takes a gap, then vouches; the leader that owed them takes none when it leads again', async () => {
    let owed = false;
    const cursors = new MemoryCursorStore();
    const first = follow({ cursors, owesPurges: () => owed });
    await first.follower.pollOnce();
    expect(first.follower.healthy).toBe(true);
    first.gaps.length = 0;

    wiki.clock += 1_000;
    first.now += 1_000;
    wiki.add('Edited while a master was down');
    owed = true;
    await first.follower.pollOnce();
    expect(first.applied).toEqual(['Edited while a master was down']);
    expect(first.follower.healthy).toBe(false);
    expect(cursorFromStored(await cursors.load())?.owedBy).toEqual(expect.any(String));

    // The first one stops (its lease expires); another replica, owing nothing, takes the cursor up.
    const heir = follow({ cursors, owesPurges: () => false, now: first.now + 1_000 });
    await heir.follower.pollOnce();
    expect(heir.gaps.map((g) => g.reason)).toEqual(['owed']);
    // The row the first one read is behind the cursor: not applied again; the gap covers it.
    expect(heir.applied).toEqual([]);
    expect(heir.follower.healthy).toBe(true);
    // Its own cursor names no owed purges.
    expect(cursorFromStored(await cursors.load())?.owedBy).toBeUndefined();
  });

  it('the follower that owed the purges resumes its own cursor without a gap', async () => {
    let owed = false;
    const cursors = new MemoryCursorStore();
    let holds = true;
    const leader = follow({ cursors, owesPurges: () => owed, lease: { hold: () => Promise.resolve(holds), release: () => Promise.resolve() } });
    await leader.follower.pollOnce();
    leader.gaps.length = 0;

    wiki.clock += 1_000;
    leader.now += 1_000;
    wiki.add('Edited again while a master was down');
    owed = true;
    await leader.follower.pollOnce();
    expect(cursorFromStored(await cursors.load())?.owedBy).toEqual(expect.any(String));
    // It loses the lease for a poll (it resumes from the stored cursor when it leads again) ...
    holds = false;
    leader.now += 1_000;
    await leader.follower.pollOnce();
    holds = true;
    // ... and carries its purges meanwhile: it leads again from its own cursor, no gap.
    owed = false;
    leader.now += 1_000;
    await leader.follower.pollOnce();
    expect(leader.gaps).toEqual([]);
    expect(leader.follower.healthy).toBe(true);
  });

  it('an heir that owes the gap`s own expiry (the same master down) marks the cursor so: the next one takes a gap too', async () => {
    let owed = false;
    const cursors = new MemoryCursorStore();
    const first = follow({ cursors, owesPurges: () => owed });
    await first.follower.pollOnce();
    wiki.clock += 1_000;
    first.now += 1_000;
    wiki.add('Edited while a master was down, once more');
    owed = true;
    await first.follower.pollOnce();

    // The heir's gap cannot reach the shared tier either: it owes it. And its poll fails right
    // after the gap (the rows are asked for; the gap asked for positions alone): the cursor the
    // gap saved is the one the next replica finds.
    const heir = follow({ cursors, owesPurges: () => true, now: first.now + 1_000 });
    wiki.failWhen = (q) => (q.get('rcprop') ?? '').includes('title');
    await heir.follower.pollOnce().catch(() => undefined);
    wiki.failWhen = () => false;
    expect(heir.gaps.map((g) => g.reason)).toEqual(['owed']);
    expect(heir.follower.healthy).toBe(false);
    const stored = cursorFromStored(await cursors.load());
    expect(stored?.behind).toBe(true);
    expect(stored?.owedBy).toEqual(expect.any(String));

    const next = follow({ cursors, owesPurges: () => false, now: first.now + 2_000 });
    await next.follower.pollOnce();
    expect(next.gaps.map((g) => g.reason)).toEqual(['owed']);
  });

  it('a follower of the same process (a reload`s next generation, which is handed the owed purges) resumes the cursor without a gap', async () => {
    let owed = false;
    const cursors = new MemoryCursorStore();
    const old = follow({ cursors, owesPurges: () => owed, ownerId: 'this process' });
    await old.follower.pollOnce();
    wiki.clock += 1_000;
    old.now += 1_000;
    wiki.add('Edited before a reload');
    owed = true;
    await old.follower.pollOnce();

    const next = follow({ cursors, owesPurges: () => owed, ownerId: 'this process', now: old.now + 1_000 });
    await next.follower.pollOnce();
    expect(next.gaps).toEqual([]);
    expect(next.follower.healthy).toBe(false);
    owed = false;
    next.now += 1_000;
    await next.follower.pollOnce();
    expect(next.gaps).toEqual([]);
    expect(next.follower.healthy).toBe(true);
  });
});
