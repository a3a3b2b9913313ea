// One account logging in again and again (MediaWiki does not throttle successful logins) grew
// its list of sessions without bound, here and in Redis, and since a session holder's write
// evicts every session of its user, each POST of that account paid for all of them while its
// client waited: 30,000 logins made each POST take 1-2 s and stalled every other client (the
// fix, commit e744978). And with Redis stalled, that write waited the 1 s+ bound of
// the follower's purges rather than the tight one of a session purge. The lists are bounded
// (MAX_SESSIONS_PER_USER), and a write's purge keeps the tight bound. On one redis-server and
// on a Redis Cluster (every node stopped for the stall: test/support/redis-backends.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { MAX_SESSIONS_PER_USER } from '../../src/policy/session-users.js';
import { answerLoginsAs, loginThrough, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const LOGINS = MAX_SESSIONS_PER_USER * 3;
const REDIS_TIMEOUT_MS = 100;

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('an account that logs in again and again (%s)', (_name, start) => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  let redis: RunningRedisBackend;
  beforeAll(async () => {
    redis = await start();
    fake = await startFakeUpstream(
      answerLoginsAs('Mallory', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{"options":"success"}');
      }),
    );
    gw = await startGateway(fake.url, {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      ...redis.env,
      WIKIEDGE_REDIS_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
      WIKIEDGE_IDENTITY_SECRET: 'session-list-amplification-secret-0123456789',
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  const login = () => loginThrough(gw.apiUrl, 'Mallory');

  it('keeps a bounded list of its sessions, here and in Redis; its writes keep the tight Redis bound', async () => {
    let last = '';
    for (let i = 0; i < LOGINS; i += 50) last = (await Promise.all(Array.from({ length: 50 }, login)))[49]!;
    const local = gw.built.gateway.sessionUsers.slots('Mallory');
    expect(local.length).toBeLessThanOrEqual(MAX_SESSIONS_PER_USER);
    // Redis is told without waiting: poll it.
    const list = redisKeys('wikiedge:', redis.cluster).userSessions('Mallory');
    const inspect = await redis.client();
    try {
      await expect.poll(() => inspect.scard(list), { timeout: 10_000 }).toBeLessThanOrEqual(MAX_SESSIONS_PER_USER);
      expect(await inspect.scard(list)).toBeGreaterThan(0);
    } finally {
      inspect.disconnect();
    }

    // A write of the newest session, with Redis stalled: the tight bound (the lookup of the
    // session's user is local here; the purge waits WIKIEDGE_REDIS_TIMEOUT_MS), not the
    // follower's (20 times that).
    redis.pause();
    try {
      const t0 = performance.now();
      const res = await http(`${gw.apiUrl}?action=options&format=json`, {
        method: 'POST',
        headers: { cookie: last, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'change=x%3D1&token=%2B%5C',
      });
      const ms = performance.now() - t0;
      expect(res.status).toBe(200);
      expect(ms).toBeLessThan(REDIS_TIMEOUT_MS * 10);
    } finally {
      redis.resume();
    }
  });
});
