// A renewal of the lease that failed was taken for the lease lost, whatever the failure: the
// lease call is bounded by WIKIEDGE_REDIS_TIMEOUT_MS (50 ms), and behind a long tags purge (a
// batch of 2,000 rows into Redis) it timed out. The poll was thrown away, its cursor unsaved,
// and the next poll met the same batch again, and again: the follower never vouched. A failed
// renewal now loses the lease only once the last that succeeded is as old as the lease
// (follower.ts renewLease, Lease.durationMs): until then no other replica can have taken it.
import { expect, it } from 'vitest';
import { leasedReplicas, slowAndFastWiki } from '../support/leased-followers.js';

const servers = slowAndFastWiki(() => 0);
const { wiki } = servers;

it('renewals that time out through an apply shorter than the lease: it keeps the lease and saves its cursor', async () => {
  let slow = false;
  let timingOut = false;
  const { writers, follower } = leasedReplicas(5_000, {
    unhealthyAfterMs: 60_000,
    gapAfterMs: 600_000,
    pollBudgetMs: 60_000,
    tellsDuration: true,
    renewalsTimeOut: () => timingOut,
    // The renewals time out from the apply's start (a purge script holding Redis).
    apply: () => {
      if (!slow) return Promise.resolve();
      timingOut = true;
      return new Promise((r) => setTimeout(r, 2_500));
    },
  });
  const a = follower('A', servers.fast.url);
  await a.pollOnce();
  expect(a.isLeader).toBe(true);
  writers.length = 0;
  wiki.add('A batch into a slow Redis', { at: Date.now() });
  slow = true;
  const polling = a.pollOnce();
  // The renewals of the apply's first two seconds time out; the one after it succeeds.
  setTimeout(() => (timingOut = false), 2_200);
  await polling;
  expect(a.isLeader).toBe(true);
  expect(writers).toEqual(['A']);
}, 60_000);

it('renewals that fail for as long as the lease: the lease is taken for lost, no cursor saved', async () => {
  let slow = false;
  let timingOut = false;
  const { writers, follower } = leasedReplicas(3_000, {
    unhealthyAfterMs: 60_000,
    gapAfterMs: 600_000,
    pollBudgetMs: 60_000,
    tellsDuration: true,
    renewalsTimeOut: () => timingOut,
    apply: () => {
      if (!slow) return Promise.resolve();
      timingOut = true;
      return new Promise((r) => setTimeout(r, 4_000));
    },
  });
  const a = follower('A', servers.fast.url);
  await a.pollOnce();
  writers.length = 0;
  wiki.add('A batch into a Redis that does not answer', { at: Date.now() });
  slow = true;
  await a.pollOnce();
  expect(a.isLeader).toBe(false);
  expect(writers).toEqual([]);
}, 60_000);

it('a renewal that finds the lease taken (Redis lost the key, another replica took it): lost at once, no cursor saved', async () => {
  let slow = false;
  const { writers, follower, expireLease } = leasedReplicas(5_000, {
    unhealthyAfterMs: 60_000,
    gapAfterMs: 600_000,
    pollBudgetMs: 60_000,
    tellsDuration: true,
    apply: () => (slow ? new Promise((r) => setTimeout(r, 2_500)) : Promise.resolve()),
  });
  const a = follower('A', servers.fast.url);
  const b = follower('B', servers.fast.url);
  await a.pollOnce();
  writers.length = 0;
  wiki.add('A batch while Redis restarts', { at: Date.now() });
  slow = true;
  const polling = a.pollOnce();
  await new Promise((r) => setTimeout(r, 300));
  // Redis came back without the lease; B takes it and follows.
  expireLease();
  slow = false;
  await b.pollOnce();
  expect(b.isLeader).toBe(true);
  await polling;
  expect(a.isLeader).toBe(false);
  expect(writers).toEqual(['B']);
}, 60_000);
