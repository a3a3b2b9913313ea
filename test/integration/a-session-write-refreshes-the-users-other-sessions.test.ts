// What one session of a user writes, the user's other sessions read: a preference set in a
// browser shows in the bot's userinfo, and a password changed through Special:ChangeCredentials
// ends every other session at the wiki (SpecialChangeCredentials calls
// SessionManager::invalidateSessionsForUser). A write through the gateway used to evict the
// writing session's own entries only: the user's other sessions kept being served what they had
// cached, until their session TTL (10 s, or 300 s while the change follower runs), and a session
// the password change had just ended kept getting its private answers. A session holder's write
// now evicts every session of the same user that the gateway (or, with replicas, Redis) learned
// from the wiki's own answers.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { REDIS_BACKENDS, type RunningRedisBackend } from '../support/redis-backends.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, formFields, formLoginCookies, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');
// Long enough that no entry of a test expires on its own while it runs, even on a busy machine.
const LONG_SESSION_TTL = { WIKIEDGE_TTL_SESSION_SECONDS: '600' };

/** A user of its own for each test (a password change would break every other test's logins). */
async function createUser(password: string): Promise<string> {
  const name = `Wikiedge session test ${randomUUID().slice(0, 8)}`;
  const api = `${wiki}/w/api.php`;
  const tokenRes = await fetch(`${api}?action=query&meta=tokens&type=createaccount&format=json`);
  const cookie = tokenRes.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const token = ((await tokenRes.json()) as { query: { tokens: { createaccounttoken: string } } }).query.tokens.createaccounttoken;
  const res = await fetch(api, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({
      action: 'createaccount',
      username: name,
      password,
      retype: password,
      createtoken: token,
      createreturnurl: `${wiki}/`,
      format: 'json',
    }),
  });
  const body = (await res.json()) as { createaccount?: { status?: string } };
  if (body.createaccount?.status !== 'PASS') throw new Error(`createaccount failed: ${JSON.stringify(body)}`);
  return name;
}

interface UserInfo {
  readonly name: string;
  readonly anon?: boolean;
  readonly options?: Record<string, unknown>;
}

async function userinfo(gw: RunningGateway, cookie: string): Promise<{ info: UserInfo; xCache: string | undefined }> {
  const res = await http(`${gw.apiUrl}?action=query&meta=userinfo&uiprop=options&format=json&formatversion=2`, { headers: { cookie } });
  expect(res.status).toBe(200);
  return { info: (JSON.parse(res.body) as { query: { userinfo: UserInfo } }).query.userinfo, xCache: header(res, 'x-cache') };
}

/** Read until the answer is a hit of that session's entry (the first read stores it). */
async function cached(gw: RunningGateway, cookie: string): Promise<UserInfo> {
  await userinfo(gw, cookie);
  const second = await userinfo(gw, cookie);
  expect(second.xCache).toBe('hit');
  return second.info;
}

/** Special:ChangeCredentials' password form, filled in and sent the way a browser does, through `base`. */
async function changePasswordByForm(base: string, cookie: string, password: string): Promise<void> {
  const formUrl = `${base}/w/index.php?title=Special:ChangeCredentials/MediaWiki%5CAuth%5CPasswordAuthenticationRequest`;
  const page = await http(formUrl, { headers: { cookie } });
  expect(page.status).toBe(200);
  const fields = formFields(page.body);
  expect(fields.get('wpEditToken')).toBeTruthy();
  fields.set('password', password);
  fields.set('retype', password);
  const res = await http(`${base}/w/index.php`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  });
  // The wiki answers the form with its result page (the session's own cookies renewed).
  expect(res.status).toBe(200);
}

describe('a write by one session of a user refreshes the user`s other sessions', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki, LONG_SESSION_TTL);
  });
  afterAll(() => gw.close());

  it('a preference set in one session shows in the other session`s userinfo at once', async () => {
    const password = `Pw-${randomUUID()}`;
    const user = await createUser(password);
    const browser = await loginCookies(gw.url, user, password);
    const bot = await loginCookies(gw.url, user, password);
    // Both sessions' userinfo cached, each under its own session.
    await cached(gw, browser);
    const before = await cached(gw, bot);
    expect(before.name).toBe(user);

    const value = randomUUID();
    await apiWrite(gw.url, browser, { action: 'options', optionname: 'userjs-wikiedge-test', optionvalue: value });

    const after = await userinfo(gw, bot);
    expect(after.info.options?.['userjs-wikiedge-test']).toBe(value);
    expect(after.xCache).not.toBe('hit');
  });

  it('a password changed through Special:ChangeCredentials: the other session, ended at the wiki, gets no cached private answer', async () => {
    const password = `Pw-${randomUUID()}`;
    const user = await createUser(password);
    const browser = await loginCookies(gw.url, user, password);
    const stolen = await loginCookies(gw.url, user, password);
    await cached(gw, browser);
    expect((await cached(gw, stolen)).name).toBe(user);

    await changePasswordByForm(gw.url, browser, `Pw-${randomUUID()}`);

    // The wiki itself: that session is no one's any more.
    const direct = await fetch(`${wiki}/w/api.php?action=query&meta=userinfo&format=json&formatversion=2`, { headers: { cookie: stolen } });
    expect(((await direct.json()) as { query: { userinfo: UserInfo } }).query.userinfo.anon).toBe(true);
    // And through the gateway, the same.
    const after = await userinfo(gw, stolen);
    expect(after.info.name).not.toBe(user);
    expect(after.info.anon).toBe(true);
    expect(after.xCache).not.toBe('hit');
  });

  /** A private list of the session, read until it is a hit of that session's entry (no userinfo: the gateway is not told whose session it is). */
  async function cachedWatchlist(cookie: string): Promise<void> {
    const q = `${gw.apiUrl}?action=query&list=watchlistraw&format=json&formatversion=2&r=${randomUUID()}`;
    const read = () => http(q, { headers: { cookie } });
    await read();
    expect(header(await read(), 'x-cache')).toBe('hit');
    sessionReads.set(cookie, q);
  }
  const sessionReads = new Map<string, string>();

  for (const [how, login] of [
    ['api.php (clientlogin)', (user: string, password: string) => loginCookies(gw.url, user, password)],
    ['index.php (Special:UserLogin, as a browser)', (user: string, password: string) => formLoginCookies(gw.url, user, password)],
  ] as const) {
    it(`sessions that logged in through ${how} and never asked for userinfo: the password change still ends their entries`, async () => {
      // The gateway learns whose they are from the login itself: the session the login's answer
      // sets (MediaWiki renews the session id on login) and the {prefix}UserName it sets with it.
      const password = `Pw-${randomUUID()}`;
      const user = await createUser(password);
      const stolen = await login(user, password);
      const browser = await login(user, password);
      await cachedWatchlist(stolen);
      await changePasswordByForm(gw.url, browser, `Pw-${randomUUID()}`);
      const after = await http(sessionReads.get(stolen)!, { headers: { cookie: stolen } });
      expect(header(after, 'x-cache')).not.toBe('hit');
      // What the wiki says to that session now: it is no one's (notloggedin).
      expect(after.body).toMatch(/notloggedin/);
    });
  }

  it('a write made by a GET with a token (the rollback link of index.php) refreshes the writer`s own reads', async () => {
    // MediaWiki 1.39's rollback link is a GET (action=rollback&token=): no POST, no after-write
    // cookie, and the writer's cached read of the page stayed the vandalised one for its TTL
    // (fixed in commit c47e86b).
    const admin = await loginCookies(gw.url, ADMIN_USER, ADMIN_PASS);
    const vandal = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    const title = `Rolled back ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'good' });
    await apiWrite(wiki, vandal, { action: 'edit', title, text: 'vandalism' });
    const q = `${gw.apiUrl}?action=query&prop=revisions&rvprop=content|user&titles=${encodeURIComponent(title)}&format=json&formatversion=2`;
    const read = () => http(q, { headers: { cookie: admin } });
    await read();
    const cachedRead = await read();
    expect(header(cachedRead, 'x-cache')).toBe('hit');
    expect(cachedRead.body).toContain('vandalism');
    const tokens = await http(`${gw.apiUrl}?action=query&meta=tokens&type=rollback&format=json`, { headers: { cookie: admin } });
    const token = (JSON.parse(tokens.body) as { query: { tokens: { rollbacktoken: string } } }).query.tokens.rollbacktoken;
    const rollback = await http(
      `${gw.url}/w/index.php?title=${encodeURIComponent(title)}&action=rollback&from=${encodeURIComponent(LAB_USER)}&token=${encodeURIComponent(token)}`,
      { headers: { cookie: admin } },
    );
    expect(rollback.status).toBe(200);
    const after = await read();
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(after.body).toContain('"content":"good"');
  });
});

describe.each(REDIS_BACKENDS)('with replicas sharing %s: the replica the write goes through need not have seen the user', (_name, start) => {
  let redis: RunningRedisBackend;
  let first: RunningGateway;
  let second: RunningGateway;
  beforeAll(async () => {
    redis = await start();
    const env = { ...LONG_SESSION_TTL, ...redis.env, WIKIEDGE_IDENTITY_SECRET: 'replicas-share-this-identity-secret' };
    [first, second] = await Promise.all([startGateway(wiki, env), startGateway(wiki, env)]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await redis?.stop();
  });

  it('a preference written through the other replica shows in the first replica`s cached session at once', async () => {
    const password = `Pw-${randomUUID()}`;
    const user = await createUser(password);
    // Both sessions learned on the first replica only (their userinfo read there).
    const browser = await loginCookies(first.url, user, password);
    const bot = await loginCookies(first.url, user, password);
    await cached(first, browser);
    await cached(first, bot);
    expect(second.built.gateway.sessionUsers.size).toBe(0);

    const value = randomUUID();
    await apiWrite(second.url, browser, { action: 'options', optionname: 'userjs-wikiedge-test', optionvalue: value });

    const after = await userinfo(first, bot);
    expect(after.info.options?.['userjs-wikiedge-test']).toBe(value);
    expect(after.xCache).not.toBe('hit');
  });
});
