// Only one replica follows (a lease in Redis, max(5 s, 5 polls), renewed as a poll goes). A lease
// may still run out under a poll (its renewals did not reach Redis in time: a partition, a stalled
// process): another replica took it meanwhile and followed too, and both wrote the cursor. The
// follower renews the lease before it writes its cursor, and one that lost it leaves the cursor
// to the new leader (src/invalidation/follower.ts follow).
import { expect, it } from 'vitest';
import { leasedReplicas, slowAndFastWiki } from '../support/leased-followers.js';

const LEASE_MS = 2_000;
let slowMs = 0;
const servers = slowAndFastWiki(() => slowMs);
const { wiki } = servers;

it('a poll that outlasts the lease leaves the cursor to the replica that took it', async () => {
  const { writers, follower, expireLease } = leasedReplicas(LEASE_MS, { unhealthyAfterMs: 10_000, gapAfterMs: 60_000 });
  const a = follower('A', servers.slow.url);
  const b = follower('B', servers.fast.url);
  await a.pollOnce();
  await b.pollOnce();
  expect([a.isLeader, b.isLeader]).toEqual([true, false]);
  for (let i = 0; i < 3; i++) wiki.add(`Edit ${i}`, { at: Date.now() });
  wiki.clock = Date.now();
  // A's next page takes longer than the lease.
  slowMs = LEASE_MS + 1_000;
  const polling = a.pollOnce();
  await new Promise((r) => setTimeout(r, LEASE_MS + 300));
  expireLease();
  await b.pollOnce();
  expect(b.isLeader).toBe(true);
  writers.length = 0;
  await polling;
  expect(a.isLeader).toBe(false);
  expect(writers).not.toContain('A');
  await a.stop();
  await b.stop();
}, 30_000);
