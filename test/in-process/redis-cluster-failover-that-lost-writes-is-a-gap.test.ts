// Two gateways sharing through a Redis Cluster (3 masters, 3 replicas, cluster-node-timeout
// 1000 ms: test/support/redis-cluster.ts). Replication is asynchronous: a master acknowledges a
// write before its replica has it, and a failover then loses it
// (https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/#write-safety). Here
// the replica's link is cut and kept cut (the master is given a password its replica does not
// know, then CLIENT KILL TYPE replica; the gateways' connections, already open, stay), one
// gateway stores new answers meanwhile, their index-set joins acknowledged by that master alone,
// and the master is killed (SIGKILL). The
// promoted replica lacks those joins, so the entries they named, on the other masters, are out
// of reach of a PURGE: the other gateway used to answer the purged version (hit-shared). Each
// gateway now takes the new master as a gap (src/cache/redis/cluster-watch.ts), and every URL
// is fetched again.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { slotOf } from '../../src/cache/redis/shard-channel.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { inspector } from '../support/redis-topology.js';
import { until } from '../support/until.js';

const keys = redisKeys('wikiedge:', true);
const URLS = 24;

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : undefined;
}

describe.runIf(existsSync('/usr/bin/redis-server') && existsSync('/usr/bin/redis-cli'))('a Redis Cluster failover that lost acknowledged writes', () => {
  let fake: FakeUpstream;
  let cluster: TestCluster;
  let a: RunningGateway;
  let b: RunningGateway;
  /** How many times the stand-in wiki answered each URL: the version an answer carries. */
  const versions = new Map<string, number>();

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      const v = (versions.get(req.url!) ?? 0) + 1;
      versions.set(req.url!, v);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, public' });
      res.end(JSON.stringify({ url: req.url, version: v }));
    });
    cluster = await startCluster();
    const env = {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    };
    [a, b] = await Promise.all([startGateway(fake.url, env), startGateway(fake.url, env)]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await cluster?.stop();
    await fake?.close();
  });

  const api = (gw: RunningGateway, q: string, method = 'GET') => http(`${gw.apiUrl}?action=query&format=json&${q}`, { method });
  const stored = async (gw: RunningGateway) => (await metric(gw, 'wikiedge_redis_stored_total\\{tier="shared"\\}')) ?? 0;

  it('nothing stored before the failover is served again: a purge reaches every URL', async () => {
    await until(
      async () => [await metric(a, 'wikiedge_redis_up'), await metric(b, 'wikiedge_redis_up')],
      (u) => u[0] === 1 && u[1] === 1,
      30_000,
    );
    // The victim owns neither the purge channel (a replica that loses its channel refreshes its
    // own tier, which would hide what Redis holds) nor the global keys.
    const spared = new Set([await cluster.ownerOf(slotOf(keys.channel)), await cluster.ownerOf(slotOf(keys.invalidationSeq))]);
    const victim = (await cluster.masters()).find((p) => !spared.has(p))!;

    const qs = Array.from({ length: URLS }, (_, i) => `t=lost-${i}`);
    const before = await stored(a);
    const m = await inspector(victim);
    try {
      await m.call('CONFIG', 'SET', 'requirepass', 'the-replica-does-not-know-it');
      await m.call('CLIENT', 'KILL', 'TYPE', 'replica');
    } finally {
      m.disconnect();
    }
    for (const q of qs) expect(JSON.parse((await api(a, q)).body).version).toBe(1);
    await until(
      () => stored(a),
      (n) => n >= before + URLS,
      10_000,
    );
    await cluster.nodes.find((n) => n.port === victim)!.kill('SIGKILL');
    await until(
      async () => (await cluster.masters().catch(() => [victim])).includes(victim),
      (still) => !still,
      60_000,
    );

    // Both gateways use Redis again and read the new slot map (every 2 s); a gap is waited
    // for, not required here: without one, what is checked below fails.
    const lost = (gw: RunningGateway) => metric(gw, 'wikiedge_redis_shard_data_lost_total\\{cause="failover"\\}');
    await until(
      async () => [await lost(a), await lost(b)],
      (n) => (n[0] ?? 0) >= 1 && (n[1] ?? 0) >= 1,
      20_000,
    ).catch(() => undefined);

    for (const q of qs) {
      await until(
        async () => (await api(a, q, 'PURGE')).body,
        (body) => /"redisPurged":\d/.test(body),
        20_000,
      );
    }
    const served: string[] = [];
    for (const q of qs) {
      const r = await api(b, q);
      if (JSON.parse(r.body).version === 1) served.push(`${q}: ${header(r, 'x-cache')}`);
    }
    expect(served).toEqual([]);
    for (const gw of [a, b]) {
      expect(await lost(gw)).toBeGreaterThanOrEqual(1);
      expect(gw.logs.some((l) => l['redis'] === 'data-lost' && l['cause'] === 'failover')).toBe(true);
    }
  }, 180_000);
});
