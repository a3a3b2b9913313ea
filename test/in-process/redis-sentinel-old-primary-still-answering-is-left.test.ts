// With Sentinels, a failover whose old primary keeps answering this gateway (a partition that cut
// the Sentinels off from it but not the gateway, or a demotion that failed) left the tier up on
// the old primary: its calls never timed out, so nothing checked whom the Sentinels name, and its
// writes and purges went to a server whose data the demotion discards. While up, the tier now asks
// the Sentinels every few seconds and leaves a primary they no longer name (src/cache/redis/
// connection.ts stillOnThePrimary). Here a manual SENTINEL FAILOVER, with the old primary's
// REPLICAOF and SLAVEOF renamed away so that the Sentinels cannot demote it nor close the
// gateway's connections (their reconfiguration is one MULTI that the unknown SLAVEOF aborts).
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { inspector, startSentinelSet, type TestSentinelSet } from '../support/redis-topology.js';
import { until } from '../support/until.js';

const NAME = 'wikiedge-still-answering';

async function clientNames(port: number): Promise<string[]> {
  const c = await inspector(port);
  try {
    return [...String(await c.call('CLIENT', 'LIST')).matchAll(/ name=(\S*)/g)].map((m) => m[1]!).filter((n) => n.startsWith('wikiedge'));
  } finally {
    c.disconnect();
  }
}

async function sentinelsName(set: TestSentinelSet): Promise<string[]> {
  return Promise.all(
    set.sentinels.map(async (s) => {
      const c = await inspector(s.port);
      try {
        return ((await c.call('SENTINEL', 'get-master-addr-by-name', NAME)) as string[])[1]!;
      } finally {
        c.disconnect();
      }
    }),
  );
}

describe.runIf(existsSync('/usr/bin/redis-server'))('a replaced Sentinel primary that still answers', () => {
  let fake: FakeUpstream;
  let set: TestSentinelSet;
  let gw: RunningGateway;

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, public' });
      res.end(JSON.stringify({ url: req.url }));
    });
    // Long enough that a busy machine does not set off a failover of its own.
    set = await startSentinelSet(NAME, { downAfterMs: 3_000, failoverTimeoutMs: 5_000 }, [
      '--rename-command',
      'REPLICAOF',
      '',
      '--rename-command',
      'SLAVEOF',
      '',
    ]);
    gw = await startGateway(fake.url, {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      WIKIEDGE_REDIS_SENTINELS: set.seeds,
      WIKIEDGE_REDIS_SENTINEL_MASTER: NAME,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    await set?.stop();
    await fake?.close();
  });

  it('is left for the primary the Sentinels name, though no call of the gateway failed', async () => {
    await until(
      () => clientNames(set.primary.port),
      (names) => names.includes('wikiedge'),
      30_000,
    );
    expect((await http(`${gw.apiUrl}?action=query&format=json&t=before`)).status).toBe(200);
    const from = gw.logs.length;

    const c = await inspector(set.sentinels[0]!.port);
    try {
      await c.call('SENTINEL', 'FAILOVER', NAME);
    } finally {
      c.disconnect();
    }
    await until(
      () => sentinelsName(set),
      (named) => named.every((p) => p === String(set.replica.port)),
      60_000,
    );
    // The old primary could not be demoted: it still says master, and answers.
    const old = await inspector(set.primary.port);
    try {
      expect(String(((await old.call('ROLE')) as unknown[])[0])).toBe('master');
    } finally {
      old.disconnect();
    }

    // Within a few checks, none of the gateway's connections is on the old primary, and it is on the new one.
    await until(
      () => clientNames(set.primary.port),
      (names) => names.length === 0,
      30_000,
    ).catch((err: unknown) => {
      console.log(JSON.stringify(gw.logs.slice(from).filter((l) => l['redis'])));
      throw err;
    });
    await until(
      () => clientNames(set.replica.port),
      (names) => names.includes('wikiedge') && names.includes('wikiedge-sub'),
      30_000,
    );
    const lines = gw.logs.slice(from);
    expect(lines.find((l) => l['redis'] === 'stale-primary')).toMatchObject({ at: `127.0.0.1:${set.primary.port}`, primary: `127.0.0.1:${set.replica.port}` });
    await until(
      () => Promise.resolve(gw.logs.slice(from).some((l) => l['redis'] === 'up')),
      (up) => up,
      30_000,
    );
    expect((await http(`${gw.apiUrl}?action=query&format=json&t=after`)).status).toBe(200);
  }, 180_000);
});
