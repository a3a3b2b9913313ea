// A session holder's write (steps/session-lifecycle.ts settleSession) purges on the client's path: in
// a cluster without Redis its answer waits until the other workers have applied the purge, or
// the next request, taken by another worker, could still be answered from what the write
// changed (workers-share-whose-sessions-are-whose failed so, now and then). Other purges do not
// wait; the wait itself is bounded in the worker (cluster/worker-side.ts).
import { describe, expect, it } from 'vitest';
import { type PurgeMessage, type PurgeSiblings, purgeEverywhere } from '../../src/cache/purge.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { CacheStore } from '../../src/cache/store.js';

const store = () => new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
const message: PurgeMessage = { kind: 'slot', slot: 'a1b2', wrote: true };

/** Siblings that apply a purge only when the test says so. */
function slowSiblings() {
  const told: PurgeMessage[] = [];
  let apply: () => void = () => undefined;
  const siblings: PurgeSiblings = {
    publish: (m) => told.push(m),
    publishAndWait: (m) => {
      told.push(m);
      return new Promise<void>((resolve) => (apply = resolve));
    },
  };
  return { siblings, told, apply: () => apply() };
}

/** Whether `p` has settled once pending callbacks have run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('a session holder’s write in a cluster', () => {
  it('without Redis: settles only once the other workers have applied the purge', async () => {
    const { siblings, told, apply } = slowSiblings();
    const purging = purgeEverywhere(store(), undefined, message, siblings, undefined, true);
    expect(told).toEqual([message]);
    expect(await settled(purging)).toBe(false);
    apply();
    expect(await settled(purging)).toBe(true);
  });

  it('with Redis down: the same, over IPC', async () => {
    const { siblings, apply } = slowSiblings();
    const redisDown = { purge: () => Promise.resolve(null) } as unknown as RedisTier;
    const purging = purgeEverywhere(store(), redisDown, message, siblings, undefined, true);
    expect(await settled(purging)).toBe(false);
    apply();
    expect(await settled(purging)).toBe(true);
  });

  it('any other purge does not wait for the siblings', async () => {
    const { siblings, told } = slowSiblings();
    expect(await settled(purgeEverywhere(store(), undefined, message, siblings))).toBe(true);
    expect(told).toEqual([message]);
  });
});
