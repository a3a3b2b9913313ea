// Every row once: the change follower's cursor (timestamp, rcid) carried with rccontinue applies
// each recentchanges row exactly once, none skipped, across page boundaries and across polls,
// rows sharing one timestamp included (hundreds in one second, split between pages and polls,
// more of them committed after a poll ended in the middle of that second), and a poll whose
// invalidation failed half-way. Rows inserted late: change-follower-applies-late-rows.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PAGES_PER_POLL } from '../../src/invalidation/follower.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';

describe('the change follower applies every row once', () => {
  let wiki: FakeRecentChanges;
  let server: FakeUpstream;
  beforeAll(async () => {
    ({ wiki, upstream: server } = await startFakeWiki());
  });
  afterAll(() => server.close());

  it('pages of 7 rows, 40 pages a poll, 900 rows in three seconds, more added between polls: each once, in order', async () => {
    wiki.rows.length = 0;
    wiki.pageSize = 7;
    wiki.add('History');
    const f = followerOf(server.url, { now: wiki.clock });
    try {
      await f.follower.pollOnce();
      f.gaps.length = 0;
      const expected: string[] = [];
      wiki.clock += 10_000;
      const t0 = wiki.clock;
      // 300 rows a second for three seconds: a poll (40 x 7 = 280 rows) ends inside a second.
      wiki.addMany(900, 'Burst', (i) => t0 + Math.floor(i / 300) * 1_000);
      for (let i = 0; i < 900; i++) expected.push(`Burst ${i}`);
      wiki.clock = t0 + 2_000;
      for (let poll = 0; poll < 6; poll++) {
        await f.follower.pollOnce();
        // Committed after the poll: one in a second the poll may have ended in (a higher id than
        // the rows of that second already read), one now.
        const extra = [wiki.add(`Same second ${poll}`, { at: t0 + Math.min(poll, 2) * 1_000 }), wiki.add(`Now ${poll}`)];
        expected.push(...extra.map((r) => r.title!));
      }
      for (let poll = 0; poll < 3; poll++) await f.follower.pollOnce();
      expect(f.gaps).toEqual([]);
      const counts = new Map<string, number>();
      for (const t of f.applied) counts.set(t, (counts.get(t) ?? 0) + 1);
      expect(
        [...counts].filter(([, n]) => n > 1),
        'applied twice',
      ).toEqual([]);
      expect(
        expected.filter((t) => !counts.has(t)),
        'skipped',
      ).toEqual([]);
      expect(f.applied).toHaveLength(expected.length);
      // The burst itself in recentchanges' order.
      expect(f.applied.filter((t) => t.startsWith('Burst '))).toEqual(expected.slice(0, 900));
      // No poll asked for more than its page budget plus the window.
      expect(wiki.queries.length).toBeLessThan(9 * (MAX_PAGES_PER_POLL + 2));
    } finally {
      wiki.pageSize = 500;
      await f.close();
    }
  });

  it('a poll whose apply fails applies its rows at the next poll, once', async () => {
    wiki.rows.length = 0;
    wiki.add('History');
    const f = followerOf(server.url, { now: wiki.clock });
    try {
      await f.follower.pollOnce();
      wiki.clock += 5_000;
      wiki.addMany(5_000, 'Row', (i) => wiki.clock - 4_000 + Math.floor(i / 1_250) * 1_000);
      // The invalidation fails once (Redis, say) in the middle of the poll.
      const opts = (f.follower as unknown as { opts: { apply: (c: unknown[]) => Promise<void> } }).opts;
      const apply = opts.apply;
      let calls = 0;
      opts.apply = (c) => (++calls === 2 ? Promise.reject(new Error('redis down')) : apply(c));
      await f.follower.pollOnce();
      await f.follower.pollOnce();
      const rows = f.applied.filter((t) => t.startsWith('Row '));
      expect(new Set(rows).size).toBe(5_000);
      expect(rows).toHaveLength(5_000);
    } finally {
      await f.close();
    }
  });
});
