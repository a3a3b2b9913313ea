// A follower that falls behind jumps to the wiki's newest row and takes a gap (everything cached
// is refreshed). When the jumped cursor could not be saved (Redis timed out once), the jump was
// kept in memory but the gap was never taken: the next poll went on from the jumped cursor, and
// the rows of the burst it skipped were neither applied nor covered, while the follower vouched.
// The gap is now taken before the jump is kept, and a jump whose cursor was not saved is not kept
// (src/invalidation/follower.ts restart).
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Cursor } from '../../src/invalidation/follower.js';
import type { FakeUpstream } from '../support/fake-upstream.js';
import { type FakeRecentChanges, followerOf, startFakeWiki } from '../support/fake-recentchanges.js';

let wiki: FakeRecentChanges;
let server: FakeUpstream;
beforeAll(async () => {
  ({ wiki, upstream: server } = await startFakeWiki());
});
afterAll(() => server.close());

it('a burst jumped over while the cursor could not be saved is still covered by a gap', async () => {
  let stored: Cursor | undefined;
  let failNext = 0;
  const cursors = {
    load: () => Promise.resolve(stored),
    save: (c: Cursor) => {
      if (failNext > 0) {
        failNext--;
        return Promise.reject(new Error('redis: timeout'));
      }
      stored = c;
      return Promise.resolve();
    },
  };
  wiki.pageSize = 10;
  const f = followerOf(server.url, { now: wiki.clock, cursors, maxLagMs: 10_000 });
  await f.follower.pollOnce();
  f.gaps.length = 0;
  const t0 = wiki.clock;
  wiki.addMany(2_000, 'Burst', (i) => t0 + i * 30);
  wiki.clock += 60_000;
  f.now += 60_000;
  // The restart's save times out, once.
  failNext = 1;
  await f.follower.pollOnce();
  wiki.clock += 1_000;
  f.now += 1_000;
  await f.follower.pollOnce();
  const applied = new Set(f.applied.filter((t) => t.startsWith('Burst'))).size;
  // Every row of the burst applied, or a gap taken that covers them.
  expect(applied === 2_000 || f.gaps.some((g) => g.reason === 'behind')).toBe(true);
  await f.close();
});

it('a jump whose cursor cannot be saved for a while is kept: one gap, not one per poll', async () => {
  let stored: Cursor | undefined;
  let failing = false;
  const cursors = {
    load: () => Promise.resolve(stored),
    save: (c: Cursor) => {
      if (failing) return Promise.reject(new Error('redis: timeout'));
      stored = c;
      return Promise.resolve();
    },
  };
  wiki.pageSize = 10;
  const f = followerOf(server.url, { now: wiki.clock, cursors, maxLagMs: 10_000 });
  await f.follower.pollOnce();
  f.gaps.length = 0;
  const t0 = wiki.clock;
  wiki.addMany(2_000, 'Flood', (i) => t0 + i * 30);
  wiki.clock += 60_000;
  f.now += 60_000;
  failing = true;
  for (let i = 0; i < 6; i++) {
    await f.follower.pollOnce();
    wiki.clock += 1_000;
    f.now += 1_000;
  }
  expect(f.gaps.filter((g) => g.reason === 'behind')).toHaveLength(1);
  await f.close();
});
