// The change follower's cursor against a recentchanges stand-in: every row is applied exactly
// once, whatever the poll boundaries — rows sharing a second, log rows inserted late with an
// earlier timestamp (src/invalidation/follower.ts), several pages in one poll — and a follower started
// again on the same cursor store goes on where the last one stopped, with no gap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATE_WINDOW_MS, MemoryCursorStore } from '../../src/invalidation/follower.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, followerOf, iso, startFakeWiki } from '../support/fake-recentchanges.js';

describe('the change follower`s cursor', () => {
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  beforeAll(async () => {
    ({ wiki, upstream: server } = await startFakeWiki());
  });
  afterAll(() => server.close());

  /** A follower on a wiki that already has history: its first poll takes the cursor-lost gap. */
  async function started(cursors = new MemoryCursorStore()) {
    wiki.rows.length = 0;
    wiki.add('History');
    const f = followerOf(server.url, { cursors, now: wiki.clock });
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    f.applied.length = 0;
    return f;
  }

  it('rows sharing a second at a poll boundary: each applied once, none lost', async () => {
    const f = await started();
    try {
      wiki.clock += 10_000;
      wiki.add('A');
      wiki.add('B');
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['A', 'B']);
      // Two more rows in the same second as A and B, committed after the poll.
      wiki.add('C');
      wiki.add('D');
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['A', 'B', 'C', 'D']);
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['A', 'B', 'C', 'D']);
      expect(f.gaps).toHaveLength(1);
    } finally {
      await f.close();
    }
  });

  it('a log row inserted after the poll with an earlier timestamp (POSTSEND) is applied', async () => {
    const f = await started();
    try {
      wiki.clock += 10_000;
      wiki.add('Edited');
      await f.follower.pollOnce();
      // The log row of the same action, published after the edit's answer, dated 30 s earlier.
      wiki.add('User:Blocked', { type: 'log', ns: 2, logtype: 'block', logaction: 'block', at: wiki.clock - 30_000 });
      await f.follower.pollOnce();
      expect(f.applied).toEqual(['Edited', 'User:Blocked']);
    } finally {
      await f.close();
    }
  });

  it('more rows than a page: follows rccontinue, every row once', async () => {
    const f = await started();
    wiki.pageSize = 3;
    try {
      wiki.clock += 10_000;
      const titles = ['P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7'];
      for (const t of titles) wiki.add(t);
      await f.follower.pollOnce();
      expect(f.applied).toEqual(titles);
      wiki.add('P8');
      await f.follower.pollOnce();
      expect(f.applied).toEqual([...titles, 'P8']);
    } finally {
      wiki.pageSize = 500;
      await f.close();
    }
  });

  it('a follower started again on the same cursor store goes on where the last stopped, without a gap', async () => {
    const cursors = new MemoryCursorStore();
    const first = await started(cursors);
    wiki.clock += 10_000;
    wiki.add('Before restart');
    await first.follower.pollOnce();
    await first.close();
    expect(first.applied).toEqual(['Before restart']);

    wiki.clock += 3_000;
    wiki.add('While away');
    const second = followerOf(server.url, { cursors, now: first.now + 3_000 });
    try {
      await second.follower.pollOnce();
      expect(second.gaps).toEqual([]);
      expect(second.applied).toEqual(['While away']);
      expect(second.follower.healthy).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('asks with rccontinue from the late window`s floor (60 s before its cursor), never from further back', async () => {
    const f = await started();
    try {
      wiki.clock += 600_000;
      wiki.add('Late');
      await f.follower.pollOnce();
      await f.follower.pollOnce();
      const last = wiki.queries.at(-1)!;
      expect(last.get('rcdir')).toBe('newer');
      expect(last.get('rctype')).toBe('edit|new|log|categorize|external');
      expect(last.has('rcnamespace')).toBe(false);
      expect(last.has('rcstart')).toBe(false);
      // rccontinue=<TS_MW>|<rc_id>: rows from (floor, id 1) on (ApiQueryRecentChanges.php:136-148).
      const floor = iso(wiki.clock - LATE_WINDOW_MS).replace(/[^0-9]/g, '');
      expect(last.get('rccontinue')).toBe(`${floor}|1`);
    } finally {
      await f.close();
    }
  });
});
