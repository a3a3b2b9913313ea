// The lease was renewed only before each page a poll asked for; applying a batch (a mass block's
// per-user purges, a tags purge into a slow Redis) or resuming the cursor could outlast it. Another
// replica then took the lease, started from the cursor the first had not yet saved, met the same
// slow batch and lost the lease in turn: the lease went round and nobody vouched again. The
// lease is now renewed on a timer for the whole poll (follower.ts holdingLease).
import { expect, it } from 'vitest';
import { leasedReplicas, slowAndFastWiki } from '../support/leased-followers.js';

const LEASE_MS = 2_000;
const APPLY_MS = 5_000;
const servers = slowAndFastWiki(() => 0);
const { wiki } = servers;

it('an apply longer than the lease keeps it, and its cursor is saved', async () => {
  let slow = false;
  const { writers, follower } = leasedReplicas(LEASE_MS, {
    unhealthyAfterMs: 60_000,
    gapAfterMs: 600_000,
    pollBudgetMs: 60_000,
    apply: () => (slow ? new Promise((r) => setTimeout(r, APPLY_MS)) : Promise.resolve()),
  });
  const a = follower('A', servers.fast.url);
  const b = follower('B', servers.fast.url);
  await a.pollOnce();
  expect(a.isLeader).toBe(true);
  writers.length = 0;
  wiki.add('Blocked user', { at: Date.now() });
  slow = true;
  const polling = a.pollOnce();
  // Past the lease's first term, while A still applies: B finds it held.
  await new Promise((r) => setTimeout(r, LEASE_MS + 800));
  await b.pollOnce();
  await polling;
  expect(b.isLeader).toBe(false);
  expect(a.isLeader).toBe(true);
  expect(writers).toEqual(['A']);
}, 60_000);
