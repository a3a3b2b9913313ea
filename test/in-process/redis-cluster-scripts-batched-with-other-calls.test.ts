// On a Redis Cluster the tier's client pipelines concurrent calls per slot's node
// (enableAutoPipelining: src/cache/redis/cluster-client.ts), grouping each call by its first
// argument (ioredis lib/autoPipelining.ts getFirstValueInFlattenedArray). A script called with a
// leading key count (`1, key, ...`) was grouped by slot("1") and sent in that node's pipeline,
// which ioredis then refused whole ("All keys in the pipeline should belong to the same slots
// allocation group"): the calls batched with it failed and the tier was marked down. Seen as a
// gateway's tier going down at a user's first login (test/integration/redis-replicas.test.ts,
// its per-session case on a cluster). Here: the scripts a cluster runs, each issued in the same
// tick as plain reads of keys spread over every master; all succeed and the tier stays up.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const cluster = REDIS_BACKENDS.find(([name]) => name === 'a Redis Cluster')!;

describe.runIf(redisInstalled)('a Redis Cluster: scripts batched with other calls', () => {
  let redis: RunningRedisBackend;
  let tier: RedisTier;
  beforeAll(async () => {
    redis = await cluster[1]();
    tier = redis.tier({ keyPrefix: `batched:${randomUUID()}:`, timeoutMs: 2_000 });
    expect(await tier.ready(10_000)).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await tier?.close();
    await redis?.stop();
  });

  /** Reads of 32 keys (over every master) in the same tick as `script`; whether the tier stayed up. */
  async function batchedWith(script: () => Promise<unknown>): Promise<boolean> {
    const reads = Array.from({ length: 32 }, (_, i) => tier.sessionUser(`slot-${i}-${randomUUID()}`));
    await Promise.all([script(), ...reads]);
    return tier.up;
  }

  it('a session noted (its user`s list, by script) beside reads', async () => {
    const users = Array.from({ length: 8 }, () => `User ${randomUUID()}`);
    expect(await batchedWith(() => Promise.all(users.map((u) => tier.noteSession(u, `slot-of-${u}`))))).toBe(true);
    expect(await Promise.all(users.map((u) => tier.sessionUser(`slot-of-${u}`)))).toEqual(users);
  });

  it('the follower`s lease taken and released beside reads', async () => {
    const state = tier.followerState;
    let held: boolean | undefined = false;
    expect(
      await batchedWith(async () => {
        held = await state.holdLease(5_000);
      }),
    ).toBe(true);
    expect(held).toBe(true);
    expect(await batchedWith(() => state.releaseLease())).toBe(true);
  });
});
