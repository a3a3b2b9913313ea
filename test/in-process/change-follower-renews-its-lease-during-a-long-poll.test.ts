// A poll reads at least past its cursor whatever the wiki's pages cost
// (change-follower-keeps-up-with-a-slow-busy-wiki.test.ts), so on a slow wiki it outlasted the
// lease (max(5 s, 5 polls), renewed at each poll's start): another replica took it and followed
// too, the leader's cursor save was skipped, and the lease passed back and forth with rows read
// twice. The lease is now renewed as the poll goes (follower.ts LEASE_RENEW_MS).
import { expect, it } from 'vitest';
import { leasedReplicas, slowAndFastWiki } from '../support/leased-followers.js';

const LEASE_MS = 2_000;
const PAGE_MS = 400;
const servers = slowAndFastWiki(() => PAGE_MS);
const { wiki } = servers;
wiki.pageSize = 10;

it('a poll longer than the lease keeps it, and its cursor is saved', async () => {
  const { writers, follower } = leasedReplicas(LEASE_MS, { unhealthyAfterMs: 60_000, gapAfterMs: 600_000, pollBudgetMs: 60_000 });
  const a = follower('A', servers.slow.url);
  const b = follower('B', servers.fast.url);
  await a.pollOnce();
  expect(a.isLeader).toBe(true);
  writers.length = 0;
  // 12 pages of rows: about 5 s of pages at PAGE_MS, more than twice the lease.
  for (let i = 0; i < 120; i++) wiki.add(`Edit ${i}`, { at: Date.now() });
  const polling = a.pollOnce();
  // Past the lease's first term, while A still reads: B finds it held.
  await new Promise((r) => setTimeout(r, LEASE_MS + 800));
  await b.pollOnce();
  await polling;
  expect(b.isLeader).toBe(false);
  expect(writers).toEqual(['A']);
}, 60_000);
