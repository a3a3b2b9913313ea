// Three gateway replicas sharing one Redis tier (a redis-server, or a Redis Cluster): an admin
// purge's answer counts the copies every replica removed from its local tier, as each says on the
// shared tier (src/cache/redis/replica-acks.ts), beside this replica's and Redis'. A replica whose
// link to Redis is cut (still alive by its heartbeat) is named as not answering, and the answer
// comes within the bound all the same. A client's PURGE does not wait for the replicas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type Forwarder, startForwarder } from '../support/forwarder.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { rawCommand, startRedis } from '../support/redis.js';
import { startCluster } from '../support/redis-cluster.js';
import { until } from '../support/replicas.js';
import { HEARTBEAT_TTL_MS } from '../../src/cache/redis/replica-acks.js';

const QUERIES = ['action=query&prop=info&titles=A&format=json', 'action=query&prop=info&titles=B&format=json'];
const PREFIX = '/w/api.php?prop=info&action=query';

interface Shared {
  /** Where the replicas reach the shared tier; `third` is what the third one is given (a forwarder that can be cut, on one Redis). */
  readonly env: Record<string, string>;
  readonly third?: { env: Record<string, string>; cut: () => Promise<void> };
  /** How many replicas say they are alive. */
  alive(): Promise<number>;
  stop(): Promise<void>;
}

/** A RESP integer reply (`:3\r\n`). */
const integer = (reply: string): number => Number(/^:(\d+)/.exec(reply)?.[1] ?? NaN);

const BACKENDS: [string, () => Promise<Shared>][] = [
  [
    'one redis-server',
    async () => {
      const redis = await startRedis();
      const forwarder: Forwarder = await startForwarder(redis.url);
      return {
        env: { WIKIEDGE_REDIS_URL: redis.url },
        third: { env: { WIKIEDGE_REDIS_URL: forwarder.url.replace('http:', 'redis:') }, cut: () => forwarder.cut() },
        alive: async () => integer(await redis.command('ZCARD wikiedge:replicas')),
        async stop() {
          await forwarder.close();
          await redis.stop();
        },
      };
    },
  ],
  [
    'a Redis Cluster',
    async () => {
      const cluster = await startCluster();
      // The replicas' set is in the global keys' slot ({g}): asked of the master that owns it.
      const slot = integer(await rawCommand(cluster.nodes[0]!.port, 'CLUSTER KEYSLOT wikiedge:{g}replicas'));
      const owner = await cluster.ownerOf(slot);
      return {
        env: { WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds },
        alive: async () => integer(await rawCommand(owner, 'ZCARD wikiedge:{g}replicas')),
        stop: () => cluster.stop(),
      };
    },
  ],
];

describe.each(BACKENDS)('an admin purge counts every replica (%s)', (_name, start) => {
  let shared: Shared;
  let fake: FakeUpstream;
  let replicas: RunningGateway[] = [];
  const asked = new Map<string, number>();

  beforeAll(async () => {
    shared = await start();
    fake = await startFakeUpstream(answerPublicOrSessionPrivate(asked));
    const env = { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN, WIKIEDGE_IDENTITY_SECRET: 'replica-acks-share-this-identity-secret' };
    replicas = await Promise.all([
      startGateway(fake.url, { ...env, ...shared.env }),
      startGateway(fake.url, { ...env, ...shared.env }),
      startGateway(fake.url, { ...env, ...(shared.third?.env ?? shared.env) }),
    ]);
    await until('three replicas alive', async () => (await shared.alive()) === 3, 30_000);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await fake?.close();
    await shared?.stop();
  });

  /** Each URL asked of each replica in turn: the first stores it (miss), the others copy it (hit-shared): one copy in each. */
  async function copyEverywhere(from: readonly RunningGateway[]): Promise<void> {
    for (const q of QUERIES) {
      const seen = [];
      for (const r of from) seen.push(header(await http(`${r.apiUrl}?${q}`), 'x-cache'));
      expect(seen).toEqual(['miss', ...from.slice(1).map(() => 'hit-shared')]);
    }
  }

  it("sums the copies the other replicas removed with this replica's and Redis'", async () => {
    await copyEverywhere(replicas);
    const res = await adminPost(replicas[0]!.adminUrl, '/purge', { prefix: PREFIX });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      purged: QUERIES.length,
      redisPurged: QUERIES.length,
      replicas: { answered: 2, expected: 2, purged: 2 * QUERIES.length, missing: [] },
      total: 4 * QUERIES.length,
    });
  });

  it('a client PURGE neither waits for the replicas nor says what they removed', async () => {
    await copyEverywhere(replicas);
    const res = await http(`${replicas[1]!.apiUrl}?${QUERIES[0]}`, { method: 'PURGE' });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: 1, redisPurged: 1 });
    // The rest, for the next case.
    expect((await adminPost(replicas[0]!.adminUrl, '/purge', { prefix: PREFIX })).status).toBe(200);
  });

  it('names a replica cut off from Redis as not answering, and answers within the bound', async ({ skip }) => {
    if (!shared.third) return skip();
    await copyEverywhere(replicas);
    await shared.third.cut();
    const t0 = Date.now();
    const fromA = await adminPost(replicas[0]!.adminUrl, '/purge', { prefix: PREFIX });
    // Not held until the cut replica's heartbeat ends: the wait is bounded by ACK_WAIT_MS.
    expect(Date.now() - t0).toBeLessThan(HEARTBEAT_TTL_MS);
    const a = JSON.parse(fromA.body);
    expect(a).toMatchObject({ purged: QUERIES.length, redisPurged: QUERIES.length, replicas: { answered: 1, expected: 2, purged: QUERIES.length } });
    expect(a.total).toBe(3 * QUERIES.length);
    expect(a.replicas.missing).toHaveLength(1);

    // The same replica is missing from the second replica's purge: the cut one (neither A nor B).
    await copyEverywhere(replicas.slice(0, 2));
    const b = JSON.parse((await adminPost(replicas[1]!.adminUrl, '/purge', { prefix: PREFIX })).body);
    expect(b).toMatchObject({ purged: QUERIES.length, redisPurged: QUERIES.length, replicas: { answered: 1, expected: 2, purged: QUERIES.length } });
    expect(b.replicas.missing).toEqual(a.replicas.missing);
  });
});
