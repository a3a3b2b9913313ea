// Two gateways sharing through Sentinel (WIKIEDGE_REDIS_SENTINELS): a primary, one replica and
// three Sentinels (quorum 2, down-after-milliseconds 1000, failover-timeout 5000). The primary
// dies (SIGKILL: a crash) under a steady light load: no client request fails, sharing comes back
// by itself once the Sentinels have promoted the replica (the time is measured and printed), each
// gateway counts the failover, and an entry purged before the crash does not come back after it.
//
// The purge is let reach the replica before the crash (its replication offset caught up): Redis
// replication is asynchronous, and a write acknowledged by a primary that dies before its
// replica got it is lost in a failover (https://redis.io/docs/latest/operate/oss_and_stack/management/replication/),
// a purge included. docs/REDIS.md, "Redis Sentinel", says so.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { inspector, type RedisProcess, startSentinel, startServer } from '../support/redis-topology.js';
import { until } from '../support/until.js';

const NAME = 'wikiedge-test';

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : undefined;
}

describe.runIf(existsSync('/usr/bin/redis-server'))('two gateways sharing through Sentinel, across a failover', () => {
  let fake: FakeUpstream;
  let primary: RedisProcess;
  let replica: RedisProcess;
  let sentinels: RedisProcess[] = [];
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
    primary = await startServer();
    replica = await startServer(['--replicaof', '127.0.0.1', String(primary.port)]);
    sentinels = await Promise.all([0, 1, 2].map(() => startSentinel(NAME, primary)));
    // The Sentinels know each other and the replica (their hello messages take a few seconds):
    // only then can two of them agree, and one be elected to fail over.
    const s = await inspector(sentinels[0]!.port);
    try {
      await until(
        () => s.call('SENTINEL', 'ckquorum', NAME).then(String, (e: Error) => e.message),
        (r) => r.includes('3 usable Sentinels'),
        20_000,
      );
      await until(
        () => s.call('SENTINEL', 'replicas', NAME) as Promise<unknown[]>,
        (r) => r.length === 1,
        20_000,
      );
    } finally {
      s.disconnect();
    }
    const env = {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      WIKIEDGE_REDIS_SENTINELS: sentinels.map((x) => x.address).join(','),
      WIKIEDGE_REDIS_SENTINEL_MASTER: NAME,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      // A call slower than its bound marks the tier down; on a busy 2-core machine 50 ms is not enough.
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    };
    [a, b] = await Promise.all([startGateway(fake.url, env), startGateway(fake.url, env)]);
  }, 30_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([...sentinels, replica, primary].map((p) => p?.kill('SIGTERM')));
    await fake?.close();
  });

  const api = (gw: RunningGateway, q: string) => http(`${gw.apiUrl}?action=query&format=json&${q}`);

  /** A new URL asked of `first`, then of `second`: what `second` answered (`hit-shared` when they share). */
  let round = 0;
  const shareOnce = async (first: RunningGateway, second: RunningGateway) => {
    const q = `t=share-${++round}`;
    const r1 = await api(first, q);
    if (r1.status !== 200) return `first answered ${r1.status}`;
    return header(await api(second, q), 'x-cache');
  };

  it('shares through the primary the Sentinels name: a miss on one is hit-shared on the other', async () => {
    await until(
      async () => [await metric(a, 'wikiedge_redis_up'), await metric(b, 'wikiedge_redis_up')],
      (u) => u[0] === 1 && u[1] === 1,
    );
    expect(await shareOnce(a, b)).toBe('hit-shared');
    expect(await shareOnce(b, a)).toBe('hit-shared');
  });

  it('the primary dies under load: no request fails, sharing comes back by itself, a purged entry stays purged', async () => {
    // An entry both gateways and Redis hold, purged before the crash.
    const purged = 't=purged-before-the-failover';
    expect(JSON.parse((await api(a, purged)).body).version).toBe(1);
    expect(header(await api(b, purged), 'x-cache')).toBe('hit-shared');
    const p = await http(`${a.apiUrl}?action=query&format=json&${purged}`, { method: 'PURGE' });
    expect(p.status).toBe(200);
    // B heard the purge on the channel, and the replica has every write the primary acknowledged.
    await until(
      () => metric(b, 'wikiedge_redis_purge_messages_total\\{kind="url"\\}'),
      (n) => (n ?? 0) >= 1,
    );
    const [pi, ri] = [await inspector(primary.port), await inspector(replica.port)];
    try {
      const offset = Number(/master_repl_offset:(\d+)/.exec(await pi.info('replication'))![1]);
      await until(
        async () => Number(/slave_repl_offset:(\d+)/.exec(await ri.info('replication'))?.[1] ?? -1),
        (o) => o >= offset,
      );
    } finally {
      pi.disconnect();
      ri.disconnect();
    }

    // A steady light load on both: 20 URLs, each gateway in turn, a request every ~10 ms.
    const failures: string[] = [];
    let requests = 0;
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        const gw = i % 2 === 0 ? a : b;
        try {
          const r = await api(gw, `t=load-${i % 20}`);
          if (r.status !== 200) failures.push(`${r.status} ${r.body.slice(0, 200)}`);
        } catch (err) {
          failures.push(String(err));
        }
        requests++;
        await sleep(10);
      }
    })();
    await until(
      async () => requests,
      (n) => n >= 20,
    );

    // The crash, and the Sentinels' switch to the replica, watched from the test.
    const t0 = Date.now();
    await primary.kill('SIGKILL');
    let switchedMs: number | undefined;
    const watch = (async () => {
      const s = await inspector(sentinels[1]!.port);
      try {
        await until(
          () => s.call('SENTINEL', 'get-master-addr-by-name', NAME) as Promise<string[]>,
          (r) => r[1] === String(replica.port),
          30_000,
        );
        switchedMs = Date.now() - t0;
      } finally {
        s.disconnect();
      }
    })();

    // Sharing is back: a new URL missed on A is hit-shared on B, and the other way round.
    await until(
      () => shareOnce(a, b),
      (x) => x === 'hit-shared',
      30_000,
    ).catch((err: unknown) => {
      for (const [n, gw] of [
        ['a', a],
        ['b', b],
      ] as const)
        console.log(n, JSON.stringify(gw.logs.filter((l) => l['component'] === 'redis').map((l) => [l['time'], l['msg'], l['err'], l['op']])));
      throw err;
    });
    const sharingBackMs = Date.now() - t0;
    await until(
      () => shareOnce(b, a),
      (x) => x === 'hit-shared',
      10_000,
    );
    await watch;
    // A little more load on the new primary, then stop.
    const after = requests;
    await until(
      async () => requests,
      (n) => n >= after + 20,
    );
    loading = false;
    await load;

    console.log(
      `redis-sentinel-failover: primary killed; Sentinels switched to the replica after ${switchedMs} ms; sharing back after ${sharingBackMs} ms; ${requests} requests under load, ${failures.length} failed`,
    );
    expect(failures).toEqual([]);
    expect(switchedMs).toBeLessThanOrEqual(sharingBackMs + 1_000);
    // Each gateway saw its tier come back on another primary, and said so.
    for (const gw of [a, b]) {
      expect(await metric(gw, 'wikiedge_redis_failovers_total')).toBeGreaterThanOrEqual(1);
      expect(await metric(gw, 'wikiedge_redis_up')).toBe(1);
      expect(gw.logs.filter((l) => l['redis'] === 'failover').length).toBeGreaterThanOrEqual(1);
    }

    // The purged entry did not come back: the first answer for it, on either gateway, is the
    // wiki's new version, never the purged one (from Redis or a local tier).
    const rb = await api(b, purged);
    expect(header(rb, 'x-cache')).toBe('miss');
    expect(JSON.parse(rb.body).version).toBe(2);
    const ra = await api(a, purged);
    expect(['hit-shared', 'miss']).toContain(header(ra, 'x-cache'));
    expect(JSON.parse(ra.body).version).toBeGreaterThanOrEqual(2);
  }, 45_000);
});
