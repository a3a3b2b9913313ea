// A renewal of the lease that failed was taken for the lease lost, whatever the failure: the
// lease call is bounded by WIKIEDGE_REDIS_TIMEOUT_MS (50 ms), and behind a long tags purge (a
// batch of 2,000 rows into Redis) it timed out. The poll was thrown away, its cursor unsaved,
// and the next poll met the same batch again, and again: the follower never vouched. A renewal
// whose answer is unknown now loses the lease only once the last that succeeded is as old as the
// lease (follower.ts renewLease, Lease.durationMs): until then no other replica can have taken
// it. One that finds the lease taken loses it at once.
import { expect, it } from 'vitest';
import { leasedReplicas, slowAndFastWiki } from '../support/leased-followers.js';

const servers = slowAndFastWiki(() => 0);
const { wiki } = servers;

/**
 * Replica A, leading, and B beside it, sharing a lease of `leaseMs` that tells its duration; A's
 * next batch takes `applyMs` to apply, and from the apply's start every renewal times out
 * (a purge script holding Redis) until `renewalsAnswer()` is called, when `timingOut` says so.
 */
async function aLeaderWithASlowBatch(leaseMs: number, applyMs: number, timingOut: boolean) {
  let slow = false;
  let timeouts = false;
  const replicas = leasedReplicas(leaseMs, {
    unhealthyAfterMs: 60_000,
    gapAfterMs: 600_000,
    pollBudgetMs: 60_000,
    tellsDuration: true,
    renewalsTimeOut: () => timeouts,
    apply: () => {
      if (!slow) return Promise.resolve();
      timeouts = timingOut;
      return new Promise((r) => setTimeout(r, applyMs));
    },
  });
  const a = replicas.follower('A', servers.fast.url);
  const b = replicas.follower('B', servers.fast.url);
  await a.pollOnce();
  expect(a.isLeader).toBe(true);
  replicas.writers.length = 0;
  wiki.add(`A batch of ${applyMs} ms`, { at: Date.now() });
  slow = true;
  const polling = a.pollOnce();
  const renewalsAnswer = () => {
    timeouts = false;
    slow = false;
  };
  return { ...replicas, a, b, polling, renewalsAnswer };
}

it('renewals that time out through an apply shorter than the lease: it keeps the lease and saves its cursor', async () => {
  const { a, writers, polling, renewalsAnswer } = await aLeaderWithASlowBatch(5_000, 2_500, true);
  // The renewals of the apply's first two seconds time out; the one after it succeeds.
  setTimeout(renewalsAnswer, 2_200);
  await polling;
  expect(a.isLeader).toBe(true);
  expect(writers).toEqual(['A']);
}, 60_000);

it('renewals that fail for as long as the lease: the lease is taken for lost, no cursor saved', async () => {
  const { a, writers, polling } = await aLeaderWithASlowBatch(3_000, 4_000, true);
  await polling;
  expect(a.isLeader).toBe(false);
  expect(writers).toEqual([]);
}, 60_000);

it('a renewal that finds the lease taken (Redis lost the key, another replica took it): lost at once, no cursor saved', async () => {
  const { a, b, writers, polling, expireLease, renewalsAnswer } = await aLeaderWithASlowBatch(5_000, 2_500, false);
  await new Promise((r) => setTimeout(r, 300));
  // Redis came back without the lease; B takes it and follows.
  expireLease();
  renewalsAnswer();
  await b.pollOnce();
  expect(b.isLeader).toBe(true);
  await polling;
  expect(a.isLeader).toBe(false);
  expect(writers).toEqual(['B']);
}, 60_000);
