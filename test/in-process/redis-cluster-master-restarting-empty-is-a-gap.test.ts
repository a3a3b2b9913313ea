// Two gateways sharing through a Redis Cluster (3 masters, 3 replicas, no persistence:
// test/support/redis-cluster.ts). An entry and its index sets live on different masters
// (src/cache/redis/keys.ts). One master crashes (SIGKILL) and is started again at once, well
// within cluster-node-timeout (10 s here): no failover, it keeps its slots, comes back empty, and
// its replica resynchronises from it, empty too. The index sets it held are gone, so the entries
// they named, on the other two masters, are out of reach of every purge: a PURGE of each URL used
// to leave them in Redis, and the other gateway answered the purged version (hit-shared) until
// its TTL. Now each gateway sees the master's new run_id (src/cache/redis/cluster-watch.ts) and
// records a gap: nothing stored before is vouched for, so every URL is fetched again.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { slotOf } from '../../src/cache/redis/shard-channel.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { until } from '../support/until.js';

const keys = redisKeys('wikiedge:', true);
const URLS = 30;

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : undefined;
}

describe.runIf(existsSync('/usr/bin/redis-server') && existsSync('/usr/bin/redis-cli'))('a Redis Cluster master restarting empty', () => {
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
    cluster = await startCluster({ nodeTimeoutMs: 10_000 });
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

  it('nothing stored before is served again: a purge reaches every URL', async () => {
    await until(
      async () => [await metric(a, 'wikiedge_redis_up'), await metric(b, 'wikiedge_redis_up')],
      (u) => u[0] === 1 && u[1] === 1,
      30_000,
    );
    const qs = Array.from({ length: URLS }, (_, i) => `t=restart-${i}`);
    for (const q of qs) {
      expect(JSON.parse((await api(a, q)).body).version).toBe(1);
      // a answers before it stores (miss-answers-before-its-store): b may wait for its entry.
      const rb = await api(b, q);
      expect(['hit-shared', 'coalesced']).toContain(header(rb, 'x-cache'));
      expect(JSON.parse(rb.body).version).toBe(1);
    }

    // The victim owns neither the purge channel (a replica that loses its channel refreshes its
    // own tier, which would hide what Redis holds) nor the global keys.
    const spared = new Set([await cluster.ownerOf(slotOf(keys.channel)), await cluster.ownerOf(slotOf(keys.invalidationSeq))]);
    const victim = (await cluster.masters()).find((p) => !spared.has(p))!;
    const node = cluster.nodes.find((n) => n.port === victim)!;
    const before = (await cluster.keysPerMaster()).get(victim)!;
    expect(before).toBeGreaterThan(0);
    await node.kill('SIGKILL');
    await node.restart();
    await cluster.settled();
    // No failover: the same master, empty, and its replica with it.
    expect(await cluster.masters()).toContain(victim);
    const after = (await cluster.keysPerMaster()).get(victim)!;
    console.log(`redis-cluster-master-restarting-empty: master ${victim} held ${before} keys, ${after} after its restart`);

    // Both gateways use Redis again; each sees the restart within its watch's 5 s (a gap is
    // waited for, not required here: without one, what is checked below fails).
    await until(
      async () => [await metric(a, 'wikiedge_redis_up'), await metric(b, 'wikiedge_redis_up')],
      (u) => u[0] === 1 && u[1] === 1,
      30_000,
    );
    const lost = (gw: RunningGateway) => metric(gw, 'wikiedge_redis_shard_data_lost_total\\{cause="restart"\\}');
    await until(
      async () => [await lost(a), await lost(b)],
      (n) => (n[0] ?? 0) >= 1 && (n[1] ?? 0) >= 1,
      20_000,
    ).catch(() => undefined);

    // Every URL purged through a; then b, whose local copies the purges removed, reads each.
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
      expect(gw.logs.some((l) => l['redis'] === 'data-lost' && l['cause'] === 'restart')).toBe(true);
    }
  }, 180_000);
});
