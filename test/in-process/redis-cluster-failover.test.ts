// Two gateways sharing through a Redis Cluster (WIKIEDGE_REDIS_CLUSTER_NODES; 3 masters, 3
// replicas, cluster-node-timeout 1000 ms: test/support/redis-cluster.ts). A miss on one is
// hit-shared on the other, their keys land on every master, a PURGE on one reaches the other's
// local tier (sharded pub/sub). Then the master that owns the purge channel's slot is shut down
// (SHUTDOWN NOSAVE) under a steady load of anonymous and logged-in requests: no client request
// fails, no answer reaches another identity, an entry purged before does not come back, and
// sharing comes back by itself once the cluster has promoted the replica (the time is measured
// and printed).
//
// The purge is let reach every replica before the shutdown: Redis replication is asynchronous,
// and a write acknowledged by a master that dies before its replica got it is lost in a failover
// (https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/#write-safety).
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { slotOf } from '../../src/cache/redis/shard-channel.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { inspector } from '../support/redis-topology.js';
import { until } from '../support/until.js';

const PREFIX = 'wikiedge:';

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : undefined;
}

describe.runIf(existsSync('/usr/bin/redis-server') && existsSync('/usr/bin/redis-cli'))('two gateways on a Redis Cluster, across a failover', () => {
  let fake: FakeUpstream;
  let cluster: TestCluster;
  let a: RunningGateway;
  let b: RunningGateway;
  /** How many times the stand-in wiki answered each URL (and cookie): the version an answer carries. */
  const versions = new Map<string, number>();

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      const cookie = req.headers.cookie ?? '';
      const v = (versions.get(req.url! + cookie) ?? 0) + 1;
      versions.set(req.url! + cookie, v);
      const session = /wiki_session=([0-9a-f]+)/.exec(cookie)?.[1];
      res.writeHead(200, {
        'content-type': 'application/json',
        'cache-control': session ? 'private, must-revalidate, max-age=60' : 's-maxage=600, public',
        ...(session && { vary: 'Cookie' }),
      });
      res.end(JSON.stringify({ url: req.url, version: v, session: session ?? null }));
    });
    cluster = await startCluster();
    const env = {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      // A call slower than its bound marks the tier down; on a busy 2-core machine 50 ms is not enough.
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_TTL_SESSION_SECONDS: '600',
      WIKIEDGE_LOG_HITS: 'false',
    };
    [a, b] = await Promise.all([startGateway(fake.url, env), startGateway(fake.url, env)]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await cluster?.stop();
    await fake?.close();
  });

  const api = (gw: RunningGateway, q: string, cookie?: string) => http(`${gw.apiUrl}?action=query&format=json&${q}`, cookie ? { headers: { cookie } } : {});

  /** A new URL asked of `first`, then of `second`: what `second` answered (`hit-shared` when they share). */
  let round = 0;
  const shareOnce = async (first: RunningGateway, second: RunningGateway) => {
    const q = `t=share-${++round}`;
    const r1 = await api(first, q);
    if (r1.status !== 200) return `first answered ${r1.status}`;
    return header(await api(second, q), 'x-cache');
  };

  it('shares: a miss on one is hit-shared on the other, and the keys land on every master', async () => {
    await until(
      async () => [await metric(a, 'wikiedge_redis_up'), await metric(b, 'wikiedge_redis_up')],
      (u) => u[0] === 1 && u[1] === 1,
      30_000,
    );
    for (let i = 0; i < 30; i++) expect(await shareOnce(i % 2 ? a : b, i % 2 ? b : a)).toBe('hit-shared');
    const perMaster = [...(await cluster.keysPerMaster()).values()];
    console.log(`redis-cluster-failover: keys per master after 30 shared URLs: ${perMaster.join(', ')}`);
    expect(perMaster).toHaveLength(3);
    for (const n of perMaster) expect(n).toBeGreaterThan(0);
  });

  it('a PURGE on one gateway reaches the other (sharded pub/sub) and the cluster', async () => {
    const q = 't=purged-by-a';
    expect(JSON.parse((await api(a, q)).body).version).toBe(1);
    expect(header(await api(b, q), 'x-cache')).toBe('hit-shared');
    expect(header(await api(b, q), 'x-cache')).toBe('hit');
    const heard = (await metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}')) ?? 0;
    expect((await http(`${a.apiUrl}?action=query&format=json&${q}`, { method: 'PURGE' })).status).toBe(200);
    await until(
      () => metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}'),
      (n) => (n ?? 0) > heard,
    );
    const rb = await api(b, q);
    expect(header(rb, 'x-cache')).toBe('miss');
    expect(JSON.parse(rb.body).version).toBe(2);
    expect(header(await api(a, q), 'x-cache')).toBe('hit-shared');
  });

  it('the master of the channel’s slot is shut down under load: no request fails, no identity crosses, a purged entry stays purged, sharing comes back', async () => {
    const purged = 't=purged-before-the-failover';
    expect(JSON.parse((await api(a, purged)).body).version).toBe(1);
    expect(header(await api(b, purged), 'x-cache')).toBe('hit-shared');
    const heard = (await metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}')) ?? 0;
    expect((await http(`${a.apiUrl}?action=query&format=json&${purged}`, { method: 'PURGE' })).status).toBe(200);
    await until(
      () => metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}'),
      (n) => (n ?? 0) > heard,
    );
    // Every replica has every write its master acknowledged.
    for (const port of await cluster.masters()) {
      const m = await inspector(port);
      try {
        const info = await m.info('replication');
        const offset = Number(/master_repl_offset:(\d+)/.exec(info)![1]);
        await until(
          async () => Number(/slave0:.*offset=(\d+)/.exec(await m.info('replication'))?.[1] ?? -1),
          (o) => o >= offset,
        );
      } finally {
        m.disconnect();
      }
    }

    // A steady load on both: 20 public URLs and 4 sessions' private reads, each gateway in turn.
    const sessions = ['a1', 'b2', 'c3', 'd4'].map((s) => s.repeat(16));
    const failures: string[] = [];
    const crossed: string[] = [];
    let requests = 0;
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        const gw = i % 2 === 0 ? a : b;
        const session = i % 3 === 0 ? sessions[i % sessions.length] : undefined;
        try {
          const r = await api(gw, `t=load-${i % 20}`, session && `wiki_session=${session}`);
          if (r.status !== 200) failures.push(`${r.status} ${r.body.slice(0, 200)}`);
          else if (JSON.parse(r.body).session !== (session ?? null)) crossed.push(`${session} got ${r.body}`);
        } catch (err) {
          failures.push(String(err));
        }
        requests++;
        await sleep(10);
      }
    })();
    await until(
      async () => requests,
      (n) => n >= 30,
    );

    const victim = await cluster.ownerOf(slotOf(`${PREFIX}purge`));
    const t0 = Date.now();
    const m = await inspector(victim);
    await m.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    m.disconnect();
    let promotedMs: number | undefined;
    const watch = (async () => {
      await until(
        async () => {
          try {
            return await cluster.ownerOf(slotOf(`${PREFIX}purge`));
          } catch {
            return victim;
          }
        },
        (owner) => owner !== victim,
        60_000,
      );
      promotedMs = Date.now() - t0;
    })();

    // Sharing is back: 12 new URLs in a row, missed on one and hit-shared on the other, each way
    // in turn. A third of the slots were the dead master's: 12 in a row all on the other two
    // masters by chance is (2/3)^12, under 1 %.
    let inARow = 0;
    await until(
      async () => {
        inARow = (await shareOnce(inARow % 2 ? b : a, inARow % 2 ? a : b)) === 'hit-shared' ? inARow + 1 : 0;
        return inARow;
      },
      (n) => n >= 12,
      60_000,
    );
    const sharingBackMs = Date.now() - t0;
    await watch;
    // Purges cross again too (the channel is on the promoted replica now).
    const q = 't=purged-after-the-failover';
    await api(a, q);
    expect(header(await api(b, q), 'x-cache')).toBe('hit-shared');
    const heardNow = (await metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}')) ?? 0;
    await until(
      async () => (await http(`${a.apiUrl}?action=query&format=json&${q}`, { method: 'PURGE' })).body,
      (body) => /"redisPurged":\d/.test(body),
      20_000,
    );
    await until(
      () => metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}'),
      (n) => (n ?? 0) > heardNow,
      20_000,
    );

    const after = requests;
    await until(
      async () => requests,
      (n) => n >= after + 20,
    );
    loading = false;
    await load;

    console.log(
      `redis-cluster-failover: master ${victim} shut down; its replica owned the slot after ${promotedMs} ms; sharing back (12 URLs in a row) after ${sharingBackMs} ms; ${requests} requests under load, ${failures.length} failed, ${crossed.length} crossed identities`,
    );
    expect(failures).toEqual([]);
    expect(crossed).toEqual([]);
    for (const gw of [a, b]) {
      expect(await metric(gw, 'wikiedge_redis_up')).toBe(1);
      // Each gateway saw the shard's new master (src/cache/redis/cluster-watch.ts), and sees
      // every shard's master answer again.
      expect(await metric(gw, 'wikiedge_redis_failovers_total')).toBeGreaterThanOrEqual(1);
      expect(gw.logs.filter((l) => l['redis'] === 'failover').length).toBeGreaterThanOrEqual(1);
      expect(await metric(gw, 'wikiedge_redis_topology_refreshes_total')).toBeGreaterThan(0);
      await until(
        async () => Promise.all(['0', '1', '2'].map((s) => metric(gw, `wikiedge_redis_shard_up\\{shard="${s}"\\}`))),
        (up) => up.every((u) => u === 1),
        20_000,
      );
    }

    // The purged entry did not come back: the first answer for it, on either gateway, is the
    // wiki's new version, never the purged one (from Redis or a local tier).
    const rb = await api(b, purged);
    expect(JSON.parse(rb.body).version).toBe(2);
    const ra = await api(a, purged);
    expect(JSON.parse(ra.body).version).toBeGreaterThanOrEqual(2);
  }, 150_000);
});
