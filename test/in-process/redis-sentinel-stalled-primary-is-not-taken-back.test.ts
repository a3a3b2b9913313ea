// A Sentinel primary that stalls without closing its connections (SIGSTOP: a paused VM) past
// down-after-milliseconds is replaced by its replica; when it runs again (SIGCONT) it answers PING
// on the gateway's old connection, and says master (ROLE), until the Sentinels demote it. A
// gateway whose tier went down meanwhile must not take the tier up there: the purge it owes
// would be written to a primary whose data the demotion discards, and the purged entry would
// stay in the new primary (docs/REDIS.md, "Redis Sentinel"; src/cache/redis/connection.ts
// onThePrimary).
//
// Driven by state, never by time: the old primary is continued only once every Sentinel names the
// replica, and its REPLICAOF and SLAVEOF are renamed away (`rename-command` in redis.conf,
// https://redis.io/docs/latest/operate/oss_and_stack/management/config-file/): the Sentinels
// reconfigure a returning primary in one MULTI (SLAVEOF, CONFIG REWRITE, CLIENT KILL TYPE normal,
// EXEC: sentinelSendSlaveOf in Redis' src/sentinel.c), which the unknown SLAVEOF aborts, so it
// stays a master with the gateway's connections open for the whole test: the window in which a
// probe's PING would take it back never closes by itself.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { inspector, startSentinelSet, type TestSentinelSet } from '../support/redis-topology.js';
import { until } from '../support/until.js';

const NAME = 'wikiedge-stalled';
const MARK = 'purged-while-stalled';

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec((await http(`${gw.adminUrl}/metrics`)).body);
  return m ? Number(m[1]) : undefined;
}

/** The entry keys of the marked URL that `port` holds (its URL index set's members, still present). */
async function markedEntries(port: number): Promise<string[]> {
  const c = await inspector(port);
  try {
    const sets = await c.keys(`wikiedge:u:*${MARK}*`);
    const members = (await Promise.all(sets.map((s) => c.smembers(s)))).flat();
    const entries = members.map((m) => `wikiedge:e:${m}`);
    const present = await Promise.all(entries.map((e) => c.exists(e)));
    return entries.filter((_, i) => present[i] === 1);
  } finally {
    c.disconnect();
  }
}

async function role(port: number): Promise<string> {
  const c = await inspector(port);
  try {
    return String(((await c.call('ROLE')) as unknown[])[0]);
  } finally {
    c.disconnect();
  }
}

async function clientNames(port: number): Promise<string[]> {
  const c = await inspector(port);
  try {
    return [...String(await c.call('CLIENT', 'LIST')).matchAll(/ name=(\S*)/g)].map((m) => m[1]!).filter((n) => n.startsWith('wikiedge'));
  } finally {
    c.disconnect();
  }
}

describe.runIf(existsSync('/usr/bin/redis-server'))('a Sentinel primary that stalled and was replaced is not taken back', () => {
  let fake: FakeUpstream;
  let set: TestSentinelSet;
  let gw: RunningGateway;
  let stopped = false;

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, public' });
      res.end(JSON.stringify({ url: req.url }));
    });
    set = await startSentinelSet(NAME, { downAfterMs: 1_000, failoverTimeoutMs: 5_000 }, [
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
      // A call slower than its bound marks the tier down; on a busy 2-core machine 50 ms is not enough.
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    });
  }, 60_000);

  afterAll(async () => {
    await gw?.close();
    // A stopped process keeps a SIGTERM pending until it is continued.
    if (stopped && set?.primary.pid) process.kill(set.primary.pid, 'SIGCONT');
    await set?.stop();
    await fake?.close();
  });

  const api = (q: string, method = 'GET') => http(`${gw.apiUrl}?action=query&format=json&${q}`, { method });

  it('the purge owed while it stalled lands on the new primary, and the tier comes up only there', async () => {
    await until(
      () => metric(gw, 'wikiedge_redis_up'),
      (u) => u === 1,
      30_000,
    );
    // An entry in Redis, replicated: the replica about to be promoted holds it.
    expect((await api(`t=${MARK}`)).status).toBe(200);
    await until(
      () => markedEntries(set.replica.port),
      (e) => e.length > 0,
      30_000,
    );
    expect(await markedEntries(set.primary.port)).not.toEqual([]);

    // The primary stalls, its connections left open.
    const fromStall = gw.logs.length;
    process.kill(set.primary.pid!, 'SIGSTOP');
    stopped = true;
    // Its calls time out (TIMEOUTS_BEFORE_DOWN in a row): the tier goes down.
    let n = 0;
    await until(
      async () => {
        await Promise.all([0, 1, 2].map(() => api(`t=stall-${++n}`)));
        return metric(gw, 'wikiedge_redis_up');
      },
      (u) => u === 0,
      60_000,
    );
    // The purge the tier cannot carry now is owed, to be carried once it is up.
    expect((await api(`t=${MARK}`, 'PURGE')).status).toBe(200);
    await until(
      async () => gw.logs.slice(fromStall).some((l) => l['redisPurge'] === 'owed'),
      (owed) => owed,
    );

    // Every Sentinel names the replica: the failover is over.
    const replicaPort = String(set.replica.port);
    await until(
      () =>
        Promise.all(
          set.sentinels.map(async (s) => {
            const c = await inspector(s.port);
            try {
              return ((await c.call('SENTINEL', 'get-master-addr-by-name', NAME)) as string[])[1];
            } finally {
              c.disconnect();
            }
          }),
        ),
      (named) => named.every((p) => p === replicaPort),
      60_000,
    );

    // The old primary runs again, and still believes it is the master.
    process.kill(set.primary.pid!, 'SIGCONT');
    stopped = false;
    expect(await role(set.primary.port)).toBe('master');

    // The tier comes back, and carries the owed purge to the primary the Sentinels name.
    await until(
      () => metric(gw, 'wikiedge_redis_up'),
      (u) => u === 1,
      60_000,
    ).catch((err: unknown) => {
      console.log(JSON.stringify(gw.logs.slice(fromStall).filter((l) => l['redis'] || l['redisPurge'])));
      throw err;
    });
    await until(
      () => markedEntries(set.replica.port),
      (e) => e.length === 0,
      30_000,
    ).catch((err: unknown) => {
      console.log(JSON.stringify(gw.logs.slice(fromStall).filter((l) => l['redis'] || l['redisPurge'])));
      throw err;
    });

    // The tier was not up on the old primary: the first `up` after the stall comes once the stale
    // one was left, and the failover line follows it (noted once the tier is up on the new
    // primary, so that the gap it owes is written there at once: connection.ts notePrimary).
    const lines = gw.logs.slice(fromStall);
    const firstUp = lines.findIndex((l) => l['redis'] === 'up');
    const failover = lines.findIndex((l) => l['redis'] === 'failover');
    const stale = lines.findIndex((l) => l['redis'] === 'stale-primary');
    expect(firstUp).toBeGreaterThan(0);
    expect(stale).toBeGreaterThanOrEqual(0);
    expect(firstUp).toBeGreaterThan(stale);
    expect(failover).toBeGreaterThan(firstUp);
    expect(lines[failover]!['now']).toBe(`127.0.0.1:${set.replica.port}`);
    expect(lines[stale]).toMatchObject({ at: `127.0.0.1:${set.primary.port}`, primary: `127.0.0.1:${set.replica.port}` });
    expect(await metric(gw, 'wikiedge_redis_failovers_total')).toBeGreaterThanOrEqual(1);

    // The old primary is still a master, and none of the gateway's connections is on it any more.
    expect(await role(set.primary.port)).toBe('master');
    await until(
      () => clientNames(set.primary.port),
      (names) => names.length === 0,
    );
    expect(await clientNames(set.replica.port)).toEqual(expect.arrayContaining(['wikiedge', 'wikiedge-sub']));
  }, 240_000);
});
