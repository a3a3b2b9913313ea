// A session holder's write ends the cached answers of every session of its user
// (steps/session-lifecycle.ts). A process remembers MAX_SESSIONS_PER_USER sessions per user
// (policy/session-users.ts), and so does Redis' list: a person's browser session, learned
// first, was forgotten once a bot on the same account had logged in that many times since, and
// the user's writes then left the browser's answers cached until its session TTL. An answer
// stored while whose session it was was known now carries its user (dependencies.ts userTag),
// and a user's purge ends those whatever the lists still name. Without Redis, on one
// redis-server and on a Redis Cluster (test/support/redis-backends.ts).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SESSIONS_PER_USER } from '../../src/policy/session-users.js';
import { answerLoginsAs, loginThrough, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { redisKeys } from '../../src/cache/redis/keys.js';

/** The session slot of the one session variant held for `url` (the key names it: policy/request.ts cacheKey). */
function slotOf(gw: RunningGateway, url: string): string {
  const u = new URL(url);
  const urlKey = `${u.pathname}?${[...u.searchParams]
    .map(([k, v]) => `${k}=${v}`)
    .sort()
    .join('&')}`;
  const slots = gw.built.gateway.store.variants(urlKey).flatMap((v) => /\ns:([^\n]*):[^\n:]*\n/.exec(v.key)?.[1] ?? []);
  expect(slots).toHaveLength(1);
  return slots[0]!;
}

/** The wiki: Alice's logins, and each session's private answers (stored in its slot, and in Redis). */
const aliceWiki = () =>
  startFakeUpstream(
    answerLoginsAs('Alice', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=60', vary: 'Cookie' });
      res.end(JSON.stringify({ url: req.url, at: Date.now() }));
    }),
  );
/** What every gateway of this file runs with, its Redis aside. */
const ENV = {
  ...MANY_CLIENTS_FROM_LOOPBACK,
  WIKIEDGE_IDENTITY_SECRET: 'sessions-no-longer-listed-secret-0123456789',
  WIKIEDGE_TTL_SESSION_SECONDS: '600',
};

const NO_REDIS = ['without Redis', async () => undefined] as const;
const BACKENDS = redisInstalled ? [NO_REDIS, ...REDIS_BACKENDS] : [NO_REDIS];

describe.each(BACKENDS)('a user`s write, with more sessions than are remembered (%s)', (_name, start) => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  let redis: RunningRedisBackend | undefined;
  beforeAll(async () => {
    redis = await start();
    fake = await aliceWiki();
    gw = await startGateway(fake.url, { ...ENV, ...redis?.env });
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  const login = () => loginThrough(gw.apiUrl, 'Alice');
  /** Whether Redis' list of Alice's sessions names `slot` (false without Redis). */
  const listedInRedis = async (slot: string) => {
    if (!redis) return false;
    const inspect = await redis.client();
    try {
      return (await inspect.sismember(redisKeys('wikiedge:', redis.cluster).userSessions('Alice'), slot)) === 1;
    } finally {
      inspect.disconnect();
    }
  };
  const read = async (url: string, cookie: string) => header(await http(url, { headers: { cookie } }), 'x-cache');

  it('ends the answers of a session the lists forgot', async () => {
    const browser = await login();
    const watchlist = `${gw.apiUrl}?action=query&list=watchlistraw&format=json&r=${randomUUID()}`;
    await read(watchlist, browser);
    // Its store runs after its answer (steps/flow.ts fetchAndStore).
    await gw.built.gateway.afterAnswers.settled(10_000);
    expect(await read(watchlist, browser)).toBe('hit');

    // A bot on the same account logs in per task: the browser's session is the oldest here,
    // and Redis' list forgets one of its sessions at random per login past the bound: on
    // until neither names it.
    const slot = slotOf(gw, watchlist);
    let bot = '';
    for (let i = 0; i < MAX_SESSIONS_PER_USER + 20 || (await listedInRedis(slot)); i += 30) {
      expect(i, 'Redis` list still names the first session').toBeLessThan(MAX_SESSIONS_PER_USER * 20);
      bot = (await Promise.all(Array.from({ length: 30 }, login))).at(-1)!;
    }
    expect(gw.built.gateway.sessionUsers.slots('Alice')).toHaveLength(MAX_SESSIONS_PER_USER);
    expect(gw.built.gateway.sessionUsers.userOf(slot)).toBeUndefined();
    expect(await read(watchlist, browser)).toBe('hit');

    const wrote = await http(`${gw.apiUrl}?action=options&format=json`, {
      method: 'POST',
      headers: { cookie: bot, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'change=x%3D1&token=%2B%5C',
    });
    expect(wrote.status).toBe(200);
    // The write's answer waits for its purge (session-lifecycle.ts settleSession): no polling.
    expect(await read(watchlist, browser)).toBe('miss');
  });

  it('keeps a session in use among those remembered, however often its user logs in elsewhere', async () => {
    const browser = await login();
    const reads = Array.from({ length: 5 }, () => `${gw.apiUrl}?action=query&meta=userinfo&format=json&r=${randomUUID()}`);
    let bot = '';
    for (const [i, url] of reads.entries()) {
      // Each miss of the browser's stores an answer: the session is in use.
      expect(await read(url, browser)).toBe('miss');
      await gw.built.gateway.afterAnswers.settled(10_000);
      if (i < reads.length - 1) for (let j = 0; j < MAX_SESSIONS_PER_USER / 2; j += 25) bot = (await Promise.all(Array.from({ length: 25 }, login))).at(-1)!;
    }
    // Two lists' worth of logins since the browser's session was learned, but never more than
    // half a list between two of its stores: it is still listed, its user known when its last
    // answers were stored, and they end with the user's write.
    for (const url of reads) expect(await read(url, browser)).toBe('hit');
    await http(`${gw.apiUrl}?action=options&format=json`, {
      method: 'POST',
      headers: { cookie: bot, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'change=x%3D1&token=%2B%5C',
    });
    for (const url of reads) expect(await read(url, browser)).toBe('miss');
  });
});

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('an answer stored by a replica that never learned whose session it is (%s)', (_name, start) => {
  let fake: FakeUpstream;
  let knows: RunningGateway;
  let other: RunningGateway;
  let redis: RunningRedisBackend;
  beforeAll(async () => {
    redis = await start();
    fake = await aliceWiki();
    const env = { ...ENV, ...redis.env };
    [knows, other] = await Promise.all([startGateway(fake.url, env), startGateway(fake.url, env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([knows?.close(), other?.close()]);
    await fake?.close();
    await redis?.stop();
  });

  it('carries the user Redis knows of, and ends with the user`s write once no list names the session', async () => {
    const keys = redisKeys('wikiedge:', redis.cluster);
    const inspect = await redis.client();
    try {
      const browser = await loginThrough(knows.apiUrl, 'Alice');
      const watchlist = `${other.apiUrl}?action=query&list=watchlistraw&format=json&r=${randomUUID()}`;
      // Redis is told whose session it is without waiting: poll until it knows.
      await expect.poll(async () => (await inspect.smembers(keys.userSessions('Alice'))).length, { timeout: 10_000 }).toBe(1);
      // Read on the replica that did not see the login.
      expect(header(await http(watchlist, { headers: { cookie: browser } }), 'x-cache')).toBe('miss');
      await other.built.gateway.afterAnswers.settled(10_000);
      const slot = slotOf(other, watchlist);
      expect(other.built.gateway.sessionUsers.userOf(slot)).toBeUndefined();
      expect(header(await http(watchlist, { headers: { cookie: browser } }), 'x-cache')).toBe('hit');

      // The bot's logins, through the replica that knows, until neither its list nor Redis' names the browser.
      let bot = '';
      for (let i = 0; i < MAX_SESSIONS_PER_USER + 20 || (await inspect.sismember(keys.userSessions('Alice'), slot)) === 1; i += 30) {
        expect(i, 'Redis` list still names the first session').toBeLessThan(MAX_SESSIONS_PER_USER * 20);
        bot = (await Promise.all(Array.from({ length: 30 }, () => loginThrough(knows.apiUrl, 'Alice')))).at(-1)!;
      }
      expect(knows.built.gateway.sessionUsers.userOf(slot)).toBeUndefined();

      await http(`${knows.apiUrl}?action=options&format=json`, {
        method: 'POST',
        headers: { cookie: bot, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'change=x%3D1&token=%2B%5C',
      });
      // The other replica hears the user's purge over Redis' channel.
      await expect.poll(async () => header(await http(watchlist, { headers: { cookie: browser } }), 'x-cache'), { timeout: 5_000 }).toBe('miss');
    } finally {
      inspect.disconnect();
    }
  });
});
