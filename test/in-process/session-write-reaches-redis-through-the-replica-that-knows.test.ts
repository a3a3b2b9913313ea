// A session holder's write evicts every session of its user (steps/session-lifecycle.ts). The replica
// that takes the write may not know whose session it is, nor find it in Redis (its `su:` record
// expired or was never written, Redis having been down): it purges the session with a `wrote`
// mark, and a replica that knows the user evicts the user's other sessions locally. Their
// entries in Redis stayed, and the next miss copied them back (fixed in commit f3696a0); the
// replica that knows now purges the user's sessions in Redis and on every replica too. On one
// redis-server and on a Redis Cluster (test/support/redis-backends.ts).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerLoginsAs, loginThrough, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a write whose replica does not know the session`s user (%s)', (_name, start) => {
  let fake: FakeUpstream;
  let knows: RunningGateway;
  let other: RunningGateway;
  let redis: RunningRedisBackend;
  beforeAll(async () => {
    redis = await start();
    fake = await startFakeUpstream(
      answerLoginsAs('Alice', (req, res) => {
        // A session's private answer, stored in its slot (and in Redis).
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=60', vary: 'Cookie' });
        res.end(JSON.stringify({ url: req.url, at: Date.now() }));
      }),
    );
    const env = {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      ...redis.env,
      WIKIEDGE_IDENTITY_SECRET: 'replicas-share-this-identity-secret',
      WIKIEDGE_TTL_SESSION_SECONDS: '600',
    };
    [knows, other] = await Promise.all([startGateway(fake.url, env), startGateway(fake.url, env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([knows?.close(), other?.close()]);
    await fake?.close();
    await redis?.stop();
  });

  const login = (gw: RunningGateway) => loginThrough(gw.apiUrl, 'Alice');

  it('the replica that knows evicts the user`s other sessions in Redis and everywhere', async () => {
    const bot = await login(knows);
    const browser = await login(knows);
    // Redis' record of whose sessions these are is gone; only `knows` remembers. Nor its list
    // of the user's sessions (Redis was down when they were learned, say). Found by name
    // through the key layout, on one server or a cluster alike.
    const keys = redisKeys('wikiedge:', redis.cluster);
    const inspect = await redis.client();
    try {
      // Noted without waiting (and on a cluster, the list and each session's user on two nodes): poll.
      const noted = async () => {
        const slots = await inspect.smembers(keys.userSessions('Alice'));
        return (await Promise.all(slots.map((s) => inspect.get(keys.sessionUser(s))))).join(',');
      };
      await expect.poll(noted, { timeout: 10_000 }).toBe('Alice,Alice');
      const slots = await inspect.smembers(keys.userSessions('Alice'));
      for (const key of [...slots.map((s) => keys.sessionUser(s)), keys.userSessions('Alice')]) await inspect.del(key);
    } finally {
      inspect.disconnect();
    }
    const q = `${other.apiUrl}?action=query&list=watchlistraw&format=json&r=${randomUUID()}`;
    await http(q.replace(other.apiUrl, knows.apiUrl), { headers: { cookie: bot } });
    // Its store runs after its answer (steps/flow.ts fetchAndStore).
    await knows.built.gateway.afterAnswers.settled(10_000);
    expect(header(await http(q, { headers: { cookie: bot } }), 'x-cache')).toBe('hit-shared');

    await http(`${other.apiUrl}?action=options&format=json`, {
      method: 'POST',
      headers: { cookie: browser, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'change=x%3D1&token=%2B%5C',
    });

    await expect.poll(async () => header(await http(q, { headers: { cookie: bot } }), 'x-cache'), { timeout: 5_000 }).toBe('miss');
  });
});
