// Two gateway replicas (in this process) sharing one real redis-server, or a real Redis Cluster
// (test/support/redis-backends.ts), against the real wiki: shared entries, purge and logout
// fan-out, the cross-replica fetch lock, and (one redis-server: a cluster's failover is
// test/in-process/redis-cluster-failover.test.ts) Redis failing (stopped, killed, restarted)
// without a client request failing or waiting. Keys are named through the key layout
// (src/cache/redis/keys.ts redisKeys(prefix, cluster)) and scanned on every master.
import { randomUUID } from 'node:crypto';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import type { CacheEntry } from '../../src/cache/store.js';
import { decodeEntry, encodeEntry } from '../../src/cache/entry-codec.js';
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { cacheKey, canonicalQuery } from '../../src/policy/request.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { storedAnswers } from '../support/entries.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, type TestResponse } from '../support/http.js';
import { REDIS_BACKENDS, type RunningRedisBackend } from '../support/redis-backends.js';
import { apiLogout, LAB_USER, LAB_USER_PASS, loginCookies, upstreamRequestCount } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');
const SECRET = 'replicas-share-this-identity-secret';

const unique = () => `requestid=${randomUUID()}`;
const reachedWiki = (id: string) => upstreamRequestCount(wikiData, (line) => line.includes(id.split('=')[1]!));

async function metric(gw: RunningGateway, line: RegExp): Promise<number | undefined> {
  const body = (await http(`${gw.adminUrl}/metrics`)).body;
  const m = line.exec(body);
  return m ? Number(m[1]) : undefined;
}
const redisUp = (gw: RunningGateway) => metric(gw, /^wikiedge_redis_up (\d+)/m);

/** The Redis tier's counters of a replica, by series (`locks_total{outcome="won"}`, ...). */
async function redisCounters(gw: RunningGateway): Promise<Map<string, number>> {
  const body = (await http(`${gw.adminUrl}/metrics`)).body;
  const out = new Map<string, number>();
  for (const m of body.matchAll(/^wikiedge_redis_([a-z_]+_total(?:\{[^}]*\})?) (\S+)$/gm)) out.set(m[1]!, Number(m[2]));
  return out;
}
/** What `after` added to `before`, summed over the series whose name starts with `prefix`. */
function added(before: Map<string, number>[], after: Map<string, number>[], prefix: string): number {
  let n = 0;
  after.forEach((series, i) => {
    for (const [k, v] of series) if (k.startsWith(prefix)) n += v - (before[i]!.get(k) ?? 0);
  });
  return n;
}
const redisLogs = (gw: RunningGateway, state: 'up' | 'down') => gw.logs.filter((l) => l['redis'] === state).length;

describe.each(REDIS_BACKENDS)('two replicas sharing %s', (name, start) => {
  /** The cases that stop, kill or restart the server run on one redis-server only. */
  const itOnOneServer = it.runIf(name === 'one Redis');
  let redis: RunningRedisBackend;
  let a: RunningGateway;
  let b: RunningGateway;
  let inspect: Redis | Cluster;
  let keys: ReturnType<typeof redisKeys>;
  let user: string;

  beforeAll(async () => {
    redis = await start();
    keys = redisKeys('wikiedge:', redis.cluster);
    // On a Redis Cluster, a bound on Redis calls a busy machine keeps to (the default, 50 ms, is a
    // production bound: past it the tier is marked down and a miss is not stored, which is not
    // what these cases test; a hogged run of 3f75644 failed 3 cluster cases so). One Redis keeps
    // the default: its cases of Redis stopped and killed time requests against it.
    const env = { ...redis.env, WIKIEDGE_IDENTITY_SECRET: SECRET, ...(redis.cluster && { WIKIEDGE_REDIS_TIMEOUT_MS: '500' }) };
    [a, b] = await Promise.all([startGateway(wiki, env), startGateway(wiki, env)]);
    inspect = await redis.client();
    user = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
  }, 120_000);
  afterAll(async () => {
    inspect?.disconnect();
    await Promise.all([a?.close(), b?.close()]);
    await redis?.stop();
  });

  // The store of a miss runs after its answer (steps/flow.ts fetchAndStore): each request here
  // waits for it, so what Redis holds is read after it was written.
  const get = async (gw: RunningGateway, q: string, headers: Record<string, string> = {}) => {
    const res = await http(`${gw.apiUrl}?${q}`, { headers });
    await gw.built.gateway.afterAnswers.settled(10_000);
    return res;
  };

  it('starts with the tier up on both replicas', async () => {
    expect(await redisUp(a)).toBe(1);
    expect(await redisUp(b)).toBe(1);
    expect(redisLogs(a, 'up')).toBe(1);
  });

  it('a miss on A is a hit-shared on B, then a local hit; the wiki saw one request', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo&format=json&${id}`;
    const first = await get(a, q);
    const second = await get(b, q);
    const third = await get(b, q);
    expect(header(first, 'x-cache')).toBe('miss');
    expect(header(second, 'x-cache')).toBe('hit-shared');
    expect(header(third, 'x-cache')).toBe('hit');
    expect(second.body).toBe(first.body);
    expect(header(second, 'cache-control')).toBe(header(first, 'cache-control'));
    expect(header(second, 'content-type')).toBe(header(first, 'content-type'));
    expect(Number(header(second, 'age'))).toBeGreaterThanOrEqual(0);
    expect(await reachedWiki(id)).toBe(1);
    // Hits are counted and logged (WIKIEDGE_LOG_HITS).
    expect(b.logs.some((l) => l['cache'] === 'hit-shared')).toBe(true);
    expect(await metric(b, /^wikiedge_requests_total\{disposition="hit-shared"[^}]*\} (\d+)/m)).toBeGreaterThanOrEqual(1);
    expect(await metric(b, /^wikiedge_redis_lookups_total\{result="hit"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
  });

  it('compressed entries cross Redis: A stores its gzip there (codec version 3), B sends the same bytes and decodes them for identity', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo&siprop=namespaces&format=json&${id}`;
    const gzip = { 'accept-encoding': 'gzip' };
    const onA = await request(`${a.apiUrl}?${q}`, { headers: gzip });
    const aWire = Buffer.from(await onA.body.arrayBuffer());
    await a.built.gateway.afterAnswers.settled(10_000);
    expect(onA.headers['x-cache']).toBe('miss');
    expect(onA.headers['content-encoding']).toBe('gzip');
    const [key] = await scanAll(inspect, 'wikiedge:e:*').then(async (keys) => {
      const mine: string[] = [];
      for (const k of keys) if ((await inspect.getBuffer(k))!.includes(id.split('=')[1]!)) mine.push(k);
      return mine;
    });
    const stored = decodeEntry((await inspect.getBuffer(key!))!);
    expect((await inspect.getBuffer(key!))![2]).toBe(3);
    expect(stored.entry.coding).toBe('gzip');
    expect(stored.entry.body.equals(aWire)).toBe(true);
    expect(stored.entry.identityBytes).toBe(gunzipSync(aWire).length);

    const onB = await request(`${b.apiUrl}?${q}`, { headers: gzip });
    const bWire = Buffer.from(await onB.body.arrayBuffer());
    expect(onB.headers['x-cache']).toBe('hit-shared');
    expect(onB.headers['content-encoding']).toBe('gzip');
    expect(bWire.equals(aWire)).toBe(true);
    expect(onB.headers['content-length']).toBe(onA.headers['content-length']);
    const identity = await get(b, q);
    expect(header(identity, 'content-encoding')).toBeUndefined();
    expect(Buffer.from(identity.body).equals(gunzipSync(aWire))).toBe(true);
    expect(await reachedWiki(id)).toBe(1);
  });

  it('an entry written by the previous version (codec 2, the answer as it is) is still served', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo&siprop=namespaces&format=json&${id}`;
    const fromWiki = await http(`${wiki}/w/api.php?${q}`);
    const urlKey = `/w/api.php?${canonicalQuery(parsePhpQuery(q))}`;
    const key = cacheKey(
      urlKey,
      { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false },
      { forwardedProto: 'http', treatAsUntrusted: undefined, origin: undefined, acceptVariants: undefined },
    );
    const v3 = encodeEntry('shared', {
      status: 200,
      headers: {
        'content-type': 'application/json; charset=utf-8',
        vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
        'cache-control': 'private, must-revalidate, max-age=0',
      },
      body: Buffer.from(fromWiki.body),
      storedAt: Date.now(),
      ttlMs: 60_000,
      urlKey,
      modules: ['query', 'siteinfo'],
      slot: undefined,
      deps: ['*'],
    });
    // Version 2 had no coding byte (after status, storedAt and ttlMs).
    const v2 = Buffer.concat([v3.subarray(0, 2), Buffer.from([2]), v3.subarray(3, 18), v3.subarray(19)]);
    await inspect.set(keys.entry(key), v2, 'PX', 60_000);
    const onB = await get(b, q);
    expect(header(onB, 'x-cache')).toBe('hit-shared');
    expect(onB.body).toBe(fromWiki.body);
    expect(await reachedWiki(id)).toBe(1);
  });

  it('per-session entries are shared between replicas for that session only; no raw cookie in Redis', async () => {
    const id = unique();
    const q = `action=query&meta=userinfo&format=json&${id}`;
    const onA = await get(a, q, { cookie: user });
    const onB = await get(b, q, { cookie: user });
    expect(header(onA, 'x-cache')).toBe('miss');
    expect(header(onB, 'x-cache')).toBe('hit-shared');
    expect(JSON.parse(onB.body).query.userinfo.name).toBe(LAB_USER);
    expect(header(onB, 'cache-control')).not.toMatch(/public/);
    const anon = await get(b, q);
    expect(JSON.parse(anon.body).query.userinfo.anon).toBeDefined();

    // Nothing in Redis holds a credential: neither key names nor values nor index members.
    const session = /wiki_session=([^;]+)/.exec(user)![1]!;
    const token = /wikiToken=([^;]+)/.exec(user)?.[1];
    const all = await scanAll(inspect, '*');
    expect(all.length).toBeGreaterThan(0);
    for (const key of all) {
      expect(key).not.toContain(session);
      const type = await inspect.type(key);
      const raw = type === 'string' ? (await inspect.getBuffer(key))! : undefined;
      // An entry holds its answer compressed: read it decoded too.
      const decoded = raw && key.startsWith('wikiedge:e:') ? storedAnswers(decodeEntry(raw).entry).map((b) => b.toString('latin1')) : [];
      const values = raw
        ? [raw.toString('latin1'), ...decoded]
        : type === 'set'
          ? await inspect.smembers(key)
          : type === 'zset'
            ? await inspect.zrange(key, '0', '-1')
            : [];
      for (const v of values) {
        expect(v).not.toContain(session);
        if (token) expect(v).not.toContain(token);
      }
    }
    // Besides entries and their indexes: the invalidation sequence, and the replicas alive
    // (their random ids: cache/redis/replica-acks.ts, whose first heartbeat may come after the scan).
    const named = redis.cluster
      ? // An index set and its members' ends (P …:ends) share a slot (cache/redis/keys.ts).
        /^wikiedge:(e|l):\{[0-9a-f]{64}\}$|^wikiedge:(u|s):\{[0-9a-f]{64}\}(:ends)?$|^wikiedge:(v|us|su):[0-9a-f]{64}$|^wikiedge:(m|d):\{[0-9a-f]{64}\.\d\}(:ends)?$|^wikiedge:[rx]:\{\d+\}$|^wikiedge:\{g\}(vseq|replicas)$/
      : /^wikiedge:(e|l|s|m|d|v|us|su):[0-9a-f]{64}$|^wikiedge:u:\/w\/api\.php|^wikiedge:(vseq|replicas)$/;
    expect(all.filter((k) => !named.test(k))).toEqual([]);
  });

  it('a session`s tokens and a URL holding a secret stay in the replica that fetched them, out of Redis', async () => {
    // In Redis they lay in clear for their whole TTL, the URL under a key name (fixed in
    // commit 0d28de9): a session's CSRF token, a watchlist feed's wltoken.
    const id = unique();
    const tokens = await get(a, `action=query&meta=userinfo|tokens&format=json&${id}`, { cookie: user });
    const csrf = JSON.parse(tokens.body).query.tokens.csrftoken as string;
    expect(csrf.length).toBeGreaterThan(10);
    expect(header(await get(a, `action=query&meta=userinfo|tokens&format=json&${id}`, { cookie: user }), 'x-cache')).toBe('hit');
    const secret = `SecretWatchlistTok${id.split('=')[1]!.replace(/-/g, '')}`;
    await get(a, `action=query&list=watchlist&wlowner=${LAB_USER}&wltoken=${secret}&format=json&${id}`, { cookie: user });
    const keys = await scanAll(inspect, '*');
    for (const key of keys) {
      expect(key).not.toContain(secret);
      const type = await inspect.type(key);
      const raw = type === 'string' ? (await inspect.getBuffer(key))! : undefined;
      const decoded = raw && key.startsWith('wikiedge:e:') ? storedAnswers(decodeEntry(raw).entry).map((b) => b.toString('latin1')) : [];
      for (const v of raw ? [raw.toString('latin1'), ...decoded] : []) {
        expect(v).not.toContain(csrf);
        expect(v).not.toContain(secret);
      }
    }
    // The other replica asks the wiki itself.
    expect(header(await get(b, `action=query&meta=userinfo|tokens&format=json&${id}`, { cookie: user }), 'x-cache')).toBe('miss');
  });

  it('the Redis entry expires with the entry: PX = TTL + the longer stale window', async () => {
    const id = unique();
    await get(a, `action=wbavailablebadges&format=json&${id}`);
    // The URL's index set (on a cluster named by the URL key's hash: cache/redis/keys.ts).
    const urlKey = `/w/api.php?${canonicalQuery(parsePhpQuery(`action=wbavailablebadges&format=json&${id}`))}`;
    const urls = (await scanAll(inspect, 'wikiedge:u:*')).filter((k) => k === keys.url(urlKey));
    expect(urls).toHaveLength(1);
    const [member] = await inspect.smembers(urls[0]!);
    const pttl = await inspect.pttl(keys.entryOf(member!));
    // wbavailablebadges: s-maxage=3600; stale-if-error 300 s (the default) is the longer window.
    expect(pttl).toBeGreaterThan((3600 + 300) * 1000 - 10_000);
    expect(pttl).toBeLessThanOrEqual((3600 + 300) * 1000);
    expect(await inspect.pttl(urls[0]!)).toBeGreaterThan(pttl - 1_000);
  });

  it('PURGE on A evicts on B, locally and in Redis', async () => {
    const id = unique();
    const q = `action=wbavailablebadges&format=json&${id}`;
    await get(a, q);
    expect(header(await get(b, q), 'x-cache')).toBe('hit-shared');
    expect(header(await get(b, q), 'x-cache')).toBe('hit');
    const purge = await http(`${a.apiUrl}?${q}`, { method: 'PURGE' });
    expect(purge.status).toBe(200);
    expect(JSON.parse(purge.body)).toEqual({ purged: 1, redisPurged: 1 });
    expect(await scanAll(inspect, `wikiedge:u:*${id.split('=')[1]}*`)).toEqual([]);
    await expect.poll(async () => header(await get(b, q), 'x-cache'), { timeout: 2_000 }).toBe('miss');
    expect(await reachedWiki(id)).toBe(2);
  });

  it('an admin purge by module on B evicts on A', async () => {
    const id = unique();
    const q = `action=wbavailablebadges&format=json&${id}`;
    await get(a, q);
    expect(header(await get(a, q), 'x-cache')).toBe('hit');
    const res = await http(`${b.adminUrl}/purge?module=wbavailablebadges`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(res.body).redisPurged).toBeGreaterThanOrEqual(1);
    await expect.poll(async () => header(await get(a, q), 'x-cache'), { timeout: 2_000 }).toBe('miss');
  });

  it('an admin prefix purge on A reaches B and Redis (SCAN over the URL index)', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo&format=json&${id}`;
    await get(b, q);
    expect(header(await get(b, q), 'x-cache')).toBe('hit');
    const prefix = encodeURIComponent('/w/api.php?action=query&format=json&meta=siteinfo');
    const res = await http(`${a.adminUrl}/purge?prefix=${prefix}`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(res.body).redisPurged).toBeGreaterThanOrEqual(1);
    await expect.poll(async () => header(await get(b, q), 'x-cache'), { timeout: 2_000 }).toBe('miss');
  });

  it('an admin purge of everything on B empties Redis and A', async () => {
    const id = unique();
    const q = `action=wbavailablebadges&format=json&${id}`;
    await get(a, q);
    expect(header(await get(a, q), 'x-cache')).toBe('hit');
    const res = await http(`${b.adminUrl}/purge?all=1`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(res.body).redisPurged).toBeGreaterThanOrEqual(1);
    expect(await scanAll(inspect, 'wikiedge:[eusm]:*')).toEqual([]);
    await expect.poll(async () => header(await get(a, q), 'x-cache'), { timeout: 2_000 }).toBe('miss');
  });

  it('a logout through A evicts the session on B (locally and in Redis)', async () => {
    const cookie = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    const q = `action=query&meta=userinfo&format=json&${unique()}`;
    expect(header(await get(a, q, { cookie }), 'x-cache')).toBe('miss');
    expect(header(await get(b, q, { cookie }), 'x-cache')).toBe('hit-shared');
    expect(header(await get(b, q, { cookie }), 'x-cache')).toBe('hit');

    const logout = await apiLogout(a.apiUrl, cookie);
    expect(logout.status).toBe(200);
    expect(header(logout, 'set-cookie')).toMatch(/wiki_session=deleted/);

    let after: TestResponse | undefined;
    await expect
      .poll(
        async () => {
          after = await get(b, q, { cookie });
          return header(after, 'x-cache');
        },
        { timeout: 2_000 },
      )
      .not.toMatch(/^hit/);
    expect(JSON.parse(after!.body).query.userinfo.anon).toBeDefined();
    // A logout is a write of a session whose user A learned (its userinfo): the user's sessions go,
    // this one among them (steps/session-lifecycle.ts), as a `user` purge message.
    expect(await metric(b, /^wikiedge_redis_purge_messages_total\{kind="user"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
  });

  it('a replica whose lookup missed just before another finished its fetch takes that entry, not the lock', async () => {
    // The two steps of a miss, lookup (GET) then lock (SET NX), played in the losing order: B's
    // GET before A's SET, B's SET NX after A's unlock. A plain SET NX let B win and ask the wiki
    // again (seen once under load as two locks won, no Redis error).
    const tiers = [0, 1].map(() => redis.tier({ timeoutMs: 1_000, lockMs: 3_000, windows: { graceMs: 10_000, staleIfErrorMs: 300_000 } }));
    const [tierA, tierB] = tiers as [RedisTier, RedisTier];
    try {
      expect(await tierA.ready(2_000)).toBe(true);
      expect(await tierB.ready(2_000)).toBe(true);
      const key = `lock-race:${randomUUID()}`;
      const entry = (storedAt: number): CacheEntry => ({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"batchcomplete":true}'),
        storedAt,
        ttlMs: 60_000,
        urlKey: `/w/api.php?${key}`,
        modules: ['query'],
        slot: undefined,
        deps: [],
      });

      expect(await tierB.get('shared', key)).toBeUndefined();
      const won = await tierA.lock(key, 'shared');
      expect(won.kind).toBe('won');
      expect(await tierA.set('shared', key, entry(Date.now()))).toBe(true);
      await tierA.unlock(key, won.kind === 'won' ? won.token : '');

      expect((await tierB.lock(key, 'shared')).kind).toBe('lost');
      expect(await inspect.exists(keys.lock(key))).toBe(0);
      const fresh = (e: CacheEntry) => Date.now() - e.storedAt < e.ttlMs;
      const waited = await tierB.waitForEntry('shared', key, fresh, 1_000);
      expect(waited.outcome).toBe('entry');
      expect(waited.entry?.body.toString()).toBe('{"batchcomplete":true}');

      // An entry past its TTL (kept for grace and stale-if-error) is no fetch just done: the lock is won.
      const stale = `lock-race:${randomUUID()}`;
      expect(await tierA.set('shared', stale, { ...entry(Date.now() - 70_000), urlKey: `/w/api.php?${stale}` })).toBe(true);
      expect((await tierB.lock(stale, 'shared')).kind).toBe('won');

      // A session's entry is kept only its TTL (no stale window): any time left means a fetch
      // just done, and the lock is given back too.
      const session = `lock-race:${randomUUID()}`;
      expect(await tierA.set('session', session, { ...entry(Date.now()), urlKey: `/w/api.php?${session}`, slot: 'slot-1', ttlMs: 10_000 })).toBe(true);
      expect((await tierB.lock(session, 'session')).kind).toBe('lost');
    } finally {
      await Promise.all(tiers.map((t) => t.close()));
    }
  });

  // What the lock guarantees (src/cache/redis/locks.ts): while every Redis call answers within
  // WIKIEDGE_REDIS_TIMEOUT_MS (50 ms, 500 ms on the cluster here) and the fetch within the lock's lifetime, the wiki sees one
  // request. A replica whose Redis call fails or times out (a loaded host: the first run on a
  // fresh 2-core machine saw 2 requests) fetches by itself and counts it: every request the wiki
  // sees is the lock's winner's, or one a replica made when Redis was unavailable or its wait
  // ended without the winner's entry.
  it('2 replicas × 50 concurrent identical misses make one upstream request while Redis answers in time (the Redis lock)', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo&format=json&${id}`;
    const before = await Promise.all([a, b].map(redisCounters));
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => get(i % 2 === 0 ? a : b, q)));
    const after = await Promise.all([a, b].map(redisCounters));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    const upstream = await reachedWiki(id);
    const count = (prefix: string) => added(before, after, prefix);
    const won = count('locks_total{outcome="won"}');
    const fetchedAlone = count('locks_total{outcome="unavailable"}') + count('lock_waits_total') - count('lock_waits_total{outcome="entry"}');
    expect(won).toBeLessThanOrEqual(1);
    expect(upstream).toBe(won + fetchedAlone);
    if (count('errors_total') === 0 && count('lock_waits_total{outcome="timeout"}') === 0) expect(upstream).toBe(1);
    const dispositions = answers.map((r) => header(r, 'x-cache'));
    expect(dispositions.filter((d) => d === 'miss')).toHaveLength(upstream);
    expect(dispositions.every((d) => d === 'miss' || d === 'coalesced' || d === 'hit-shared' || d === 'hit')).toBe(true);
  });

  itOnOneServer('Redis stopped (SIGSTOP: slow, connection open): requests still succeed within the timeout, then it comes back', async () => {
    const server = redis.server!;
    const id = unique();
    const q = `action=query&meta=siteinfo&format=json&${id}`;
    process.kill(server.pid!, 'SIGSTOP');
    try {
      const timings: number[] = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const res = await get(i % 2 === 0 ? a : b, `${q}&n=${i % 3}`);
        timings.push(performance.now() - started);
        expect(res.status).toBe(200);
      }
      // At most one Redis timeout (50 ms) per replica; the wiki answers in tens of ms.
      expect(Math.max(...timings)).toBeLessThan(1_500);
      expect(await redisUp(a)).toBe(0);
      expect(await redisUp(b)).toBe(0);
    } finally {
      process.kill(server.pid!, 'SIGCONT');
    }
    await expect.poll(() => redisUp(a), { timeout: 5_000 }).toBe(1);
    await expect.poll(() => redisUp(b), { timeout: 5_000 }).toBe(1);
    expect(redisLogs(a, 'down')).toBe(1);
    expect(redisLogs(a, 'up')).toBe(2);
    expect(await metric(a, /^wikiedge_redis_errors_total\{op="get"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
  });

  itOnOneServer('Redis killed: every request still succeeds, quickly; one log line per state change', async () => {
    const downBefore = redisLogs(a, 'down');
    await redis.server!.kill('SIGKILL');
    await expect.poll(() => redisUp(a), { timeout: 2_000 }).toBe(0);
    const id = unique();
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => get(i % 2 === 0 ? a : b, `action=query&meta=siteinfo&format=json&${id}&n=${i % 4}`)),
    );
    const elapsed = performance.now() - started;
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(elapsed).toBeLessThan(3_000);
    // Local tiers and coalescing still work without Redis.
    expect(await reachedWiki(id)).toBeLessThanOrEqual(8);
    const again = await get(a, `action=query&meta=siteinfo&format=json&${id}&n=0`);
    expect(header(again, 'x-cache')).toBe('hit');
    // A purge without Redis purges locally and says Redis was not reached.
    const purge = await http(`${a.apiUrl}?action=query&meta=siteinfo&format=json&${id}&n=0`, { method: 'PURGE' });
    expect(JSON.parse(purge.body)).toEqual({ purged: 1, redisPurged: null });
    expect(redisLogs(a, 'down')).toBe(downBefore + 1);
    expect(redisLogs(b, 'down')).toBe(downBefore + 1);
  });

  itOnOneServer('Redis restarted on the same port: the tier is used again', async () => {
    await redis.restart();
    await expect.poll(() => redisUp(a), { timeout: 5_000 }).toBe(1);
    await expect.poll(() => redisUp(b), { timeout: 5_000 }).toBe(1);
    const id = unique();
    const q = `action=query&meta=siteinfo&format=json&${id}`;
    expect(header(await get(a, q), 'x-cache')).toBe('miss');
    expect(header(await get(b, q), 'x-cache')).toBe('hit-shared');
    expect(await reachedWiki(id)).toBe(1);
    // The subscriber is back too: a purge on B reaches A's local tier.
    await get(a, q);
    await http(`${b.apiUrl}?${q}`, { method: 'PURGE' });
    await expect.poll(async () => header(await get(a, q), 'x-cache'), { timeout: 3_000 }).toBe('miss');
  });

  itOnOneServer('a replica started while Redis is down starts, serves, and closes promptly', async () => {
    await redis.server!.kill('SIGKILL');
    const started = performance.now();
    const c = await startGateway(wiki, { ...redis.env, WIKIEDGE_IDENTITY_SECRET: SECRET });
    expect(performance.now() - started).toBeLessThan(4_000);
    const res = await get(c, `action=query&meta=siteinfo&format=json&${unique()}`);
    expect(res.status).toBe(200);
    expect(header(res, 'x-cache')).toBe('miss');
    const closing = performance.now();
    await c.close();
    expect(performance.now() - closing).toBeLessThan(2_000);
    await redis.restart();
  });
});

/** Every key matching `match`: on a cluster, of every master. */
async function scanAll(client: Redis | Cluster, match: string): Promise<string[]> {
  if (client instanceof Cluster) return (await Promise.all(client.nodes('master').map((node) => scanAll(node, match)))).flat();
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return keys;
}
