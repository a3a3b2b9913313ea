// WIKIEDGE_REDIS_URL names a primary by a name a failover moves (a managed endpoint, a Kubernetes
// Service). Demoted under a live connection, the old primary answers writes READONLY: the
// connection reconnects (target.ts reconnectOnError), and if the name still resolves to the old
// node, INFO says role:slave and the tier is refused. The probe then read INFO again on that same
// socket, which a replica never closes: the name was never resolved again, and the tier stayed
// down until the process restarted. A refused URL now connects again every few seconds
// (connection.ts refuse). And once the same server is a primary again, what it acknowledged
// before its demotion and did not replicate was dropped by its resynchronisation: a gap
// (connection.ts notePrimary, `demoted`).
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled)('a URL whose Redis became a replica', () => {
  let primary: TestRedis;
  let other: TestRedis;
  let tier: RedisTier;
  let admin: Redis;

  beforeAll(async () => {
    [primary, other] = await Promise.all([startRedis(), startRedis()]);
    tier = bareRedisTier(primary.url, { timeoutMs: 1_000 });
    expect(await tier.ready(5_000)).toBe(true);
    admin = new Redis(primary.url);
  }, 30_000);
  afterAll(async () => {
    admin?.disconnect();
    await tier?.close();
    await Promise.all([primary?.stop(), other?.stop()]);
  });

  const connectionsReceived = async () => Number(/total_connections_received:(\d+)/.exec(await admin.info('stats'))?.[1]);

  it('is connected again while it stays one, and the tier comes back once it is a primary again', async () => {
    const demotedAt = Date.now();
    await admin.replicaof('127.0.0.1', other.port);
    // A write answered READONLY: the reconnect finds a replica, and the tier is refused.
    await tier.purge({ kind: 'tags', tags: ['p:Demoted'] });
    await until(
      () => tier.purge({ kind: 'tags', tags: ['p:Demoted'] }),
      (purged) => purged === null,
      20_000,
    );
    // Past the READONLY reconnect itself: from then on only the refusal's own reconnects connect.
    await new Promise((r) => setTimeout(r, 1_500));
    const before = await connectionsReceived();
    await until(connectionsReceived, (n) => n >= before + 1, 20_000);
    await admin.replicaof('NO', 'ONE');
    await until(
      () => tier.purge({ kind: 'tags', tags: ['p:Promoted'] }),
      (purged) => purged !== null,
      20_000,
    );
    // Promoted again in place (same run_id), after a resynchronisation from the other primary
    // that dropped what it had acknowledged: a gap, recorded in Redis for every replica.
    await until(
      () => tier.staleBefore(),
      (at) => at !== undefined && at >= demotedAt,
      20_000,
    );
  }, 60_000);
});
