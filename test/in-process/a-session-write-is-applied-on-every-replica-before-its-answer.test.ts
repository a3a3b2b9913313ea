// A session holder's write evicts the user's sessions on every replica (steps/session-lifecycle.ts),
// and its answer comes only once every replica has applied that: the client's next request may go
// to another replica at once, and must not be answered there from what the write changed. Before,
// the answer came as soon as Redis had taken the purge, while the other replicas heard it on the
// channel some time later; and a replica that knew the user evicted the user's other sessions
// locally first and from Redis only after, so a read between the two copied them back from Redis
// (hit-shared). A hogged CI run failed a-session-write-refreshes-the-users-other-sessions so.
// Both cases: the writing replica knows whose session it is (through Redis), and it does not.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerLoginsAs, loginThrough, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

const ROUNDS = 6;

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a session write`s answer, with replicas sharing %s', (_name, start) => {
  let fake: FakeUpstream;
  let knows: RunningGateway;
  let other: RunningGateway;
  let redis: RunningRedisBackend;
  let version = 0;
  beforeAll(async () => {
    redis = await start();
    fake = await startFakeUpstream(
      answerLoginsAs('Alice', (req, res) => {
        if (req.method === 'POST') version++;
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=60', vary: 'Cookie' });
        res.end(JSON.stringify({ url: req.url, version }));
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

  /** Redis' record of whose sessions these are (su:, us:), as noted after the logins. */
  const forgetInRedis = async () => {
    const keys = redisKeys('wikiedge:', redis.cluster);
    const inspect = await redis.client();
    try {
      const noted = async () => (await inspect.smembers(keys.userSessions('Alice'))).length;
      await expect.poll(noted, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      const slots = await inspect.smembers(keys.userSessions('Alice'));
      for (const key of [...slots.map((s) => keys.sessionUser(s)), keys.userSessions('Alice')]) await inspect.del(key);
    } finally {
      inspect.disconnect();
    }
  };

  for (const writerKnows of [true, false]) {
    it(`the user's other session reads the write at once on the other replica (the writing replica ${writerKnows ? 'finds' : 'does not find'} whose session it is)`, async () => {
      const bot = await login(knows);
      const browser = await login(knows);
      if (!writerKnows) await forgetInRedis();
      for (let round = 0; round < ROUNDS; round++) {
        const q = `${knows.apiUrl}?action=query&list=watchlistraw&format=json&r=${randomUUID()}`;
        await http(q, { headers: { cookie: bot } });
        await knows.built.gateway.afterAnswers.settled(10_000);
        // In this replica's local tier, and in Redis.
        expect(header(await http(q, { headers: { cookie: bot } }), 'x-cache')).toBe('hit');
        const before = version;
        await http(`${other.apiUrl}?action=options&format=json`, {
          method: 'POST',
          headers: { cookie: browser, 'content-type': 'application/x-www-form-urlencoded' },
          body: 'change=x%3D1&token=%2B%5C',
        });
        // At once: no poll.
        const after = await http(q, { headers: { cookie: bot } });
        // Asked of the wiki (a miss, or a pass while the wiki's replication catches up), never the old copy.
        expect(['hit', 'hit-shared'], `round ${round}`).not.toContain(header(after, 'x-cache'));
        expect((JSON.parse(after.body) as { version: number }).version).toBeGreaterThan(before);
      }
    }, 60_000);
  }
});
