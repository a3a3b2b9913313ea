// Cache-mode-aware caching against the real wiki: what is shared, what stays per session, what passes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, loginCookies, upstreamRequestCount } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');

/** A unique, harmless main-module parameter (MediaWiki echoes it back) so each test has its own keys. */
const unique = () => `requestid=${randomUUID()}`;
const reachedWiki = (id: string) => upstreamRequestCount(wikiData, (line) => line.includes(id.split('=')[1]!));

describe('caching against the real wiki', () => {
  let gw: RunningGateway;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    [admin, user] = await Promise.all([loginCookies(wiki, ADMIN_USER, ADMIN_PASS), loginCookies(wiki, LAB_USER, LAB_USER_PASS)]);
  });
  afterAll(() => gw.close());
  const api = (q: string, headers: Record<string, string> = {}, method = 'GET') => http(`${gw.apiUrl}?${q}`, { method, headers });

  it('anonymous wbavailablebadges: the second request is a hit and the wiki saw one request', async () => {
    const id = unique();
    const first = await api(`action=wbavailablebadges&format=json&${id}`);
    const second = await api(`action=wbavailablebadges&format=json&${id}`);
    expect(header(first, 'x-cache')).toBe('miss');
    expect(header(second, 'x-cache')).toBe('hit');
    expect(second.body).toBe(first.body);
    expect(header(second, 'cache-control')).toBe('max-age=3600, s-maxage=3600, public');
    expect(Number(header(second, 'age'))).toBeGreaterThanOrEqual(0);
    expect(header(second, 'set-cookie')).toBeUndefined();
    expect(await reachedWiki(id)).toBe(1);
  });

  it('HEAD is answered from the GET entry', async () => {
    const id = unique();
    await api(`action=wbavailablebadges&format=json&${id}`);
    const head = await api(`action=wbavailablebadges&format=json&${id}`, {}, 'HEAD');
    expect(header(head, 'x-cache')).toBe('hit');
    expect(head.body).toBe('');
    expect(await reachedWiki(id)).toBe(1);
  });

  it('anonymous siteinfo: a hit for anonymous clients, with the headers the wiki gives without maxage', async () => {
    const id = unique();
    const direct = await http(`${wiki}/w/api.php?action=query&meta=siteinfo&format=json&${id}`);
    const first = await api(`action=query&meta=siteinfo&format=json&${id}`);
    const second = await api(`action=query&meta=siteinfo&format=json&${id}`);
    expect(header(second, 'x-cache')).toBe('hit');
    // The smaxage probe never shows: the client sees what the wiki sends for its own request.
    expect(header(first, 'cache-control')).toBe(header(direct, 'cache-control'));
    expect(header(second, 'cache-control')).toBe('private, must-revalidate, max-age=0');
    expect(header(second, 'expires')).toBeUndefined();
    expect(await reachedWiki(id)).toBe(2); // one direct, one through the gateway
  });

  it('a logged-in user is never served the anonymous entry, and vice versa', async () => {
    const id = unique();
    const q = `action=query&meta=siteinfo|userinfo&format=json&${id}`;
    // siteinfo|userinfo is private (userinfo): check with siteinfo alone, and userinfo by name.
    await api(`action=query&meta=siteinfo&format=json&${id}`);
    const asUser = await api(`action=query&meta=siteinfo&format=json&${id}`, { cookie: user });
    expect(header(asUser, 'x-cache')).not.toBe('hit');
    const asUserAgain = await api(`action=query&meta=siteinfo&format=json&${id}`, { cookie: user });
    expect(header(asUserAgain, 'x-cache')).toBe('hit');
    expect(header(asUserAgain, 'cache-control')).not.toMatch(/public/);
    const anonAgain = await api(`action=query&meta=siteinfo&format=json&${id}`);
    expect(header(anonAgain, 'x-cache')).toBe('hit');
    void q;
  });

  it('two users never see each other’s entries (meta=userinfo)', async () => {
    const id = unique();
    const q = `action=query&meta=userinfo&format=json&${id}`;
    const a1 = await api(q, { cookie: admin });
    const u1 = await api(q, { cookie: user });
    const a2 = await api(q, { cookie: admin });
    const u2 = await api(q, { cookie: user });
    const anon = await api(q);
    expect(JSON.parse(a1.body).query.userinfo.name).toBe(ADMIN_USER);
    expect(JSON.parse(u1.body).query.userinfo.name).toBe(LAB_USER);
    expect(JSON.parse(a2.body).query.userinfo.name).toBe(ADMIN_USER);
    expect(JSON.parse(u2.body).query.userinfo.name).toBe(LAB_USER);
    expect(header(a2, 'x-cache')).toBe('hit');
    expect(header(u2, 'x-cache')).toBe('hit');
    expect(JSON.parse(anon.body).query.userinfo.anon).toBeDefined();
    expect(header(anon, 'x-cache')).toBe('pass');
  });

  it('list=filearchive is cached per session for the admin; anonymous filearchive passes', async () => {
    const id = unique();
    const q = `action=query&list=filearchive&format=json&${id}`;
    expect(header(await api(q, { cookie: admin }), 'x-cache')).toBe('miss');
    expect(header(await api(q, { cookie: admin }), 'x-cache')).toBe('hit');
    expect(header(await api(q), 'x-cache')).toBe('pass');
    expect(header(await api(q), 'x-cache')).toBe('pass');
    expect(await reachedWiki(id)).toBe(3);
  });

  it('error answers, Set-Cookie answers and POSTs are never stored', async () => {
    const id = unique();
    for (let i = 0; i < 2; i++) expect(header(await api(`action=nosuch&format=json&${id}`), 'x-cache')).toBe('pass');
    // Stale credentials: the wiki deletes them (Set-Cookie), the deletions are relayed, nothing stored.
    const stale = { cookie: 'wikiUserID=1; wikiUserName=Admin; wikiToken=0000; forceHTTPS=true' };
    const withCookies = await api(`action=query&meta=siteinfo&format=json&maxage=60&smaxage=60&${id}`, stale);
    expect(header(withCookies, 'x-cache')).toBe('pass');
    expect(header(withCookies, 'set-cookie')).toMatch(/wikiUserID=deleted/);
    const again = await api(`action=query&meta=siteinfo&format=json&maxage=60&smaxage=60&${id}`, stale);
    expect(header(again, 'set-cookie')).toMatch(/wikiUserID=deleted/);
    for (let i = 0; i < 2; i++) {
      const post = await http(gw.apiUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `action=query&meta=siteinfo&format=json&${id}p`,
      });
      expect(header(post, 'x-cache')).toBe('pass');
    }
    expect(await reachedWiki(id)).toBe(4);
  });

  it('a clean anonymous request never gets a Set-Cookie from a hit', async () => {
    const id = unique();
    await api(`action=query&meta=siteinfo&format=json&${id}`);
    const hit = await api(`action=query&meta=siteinfo&format=json&${id}`);
    expect(header(hit, 'x-cache')).toBe('hit');
    expect(hit.headers['set-cookie']).toBeUndefined();
  });

  it('200 concurrent identical anonymous misses make exactly one upstream request', async () => {
    const id = unique();
    const answers = await Promise.all(Array.from({ length: 200 }, () => api(`action=query&meta=siteinfo&format=json&${id}`)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(await reachedWiki(id)).toBe(1);
    expect(answers.filter((a) => header(a, 'x-cache') === 'miss')).toHaveLength(1);
  });

  it('PURGE from loopback evicts every variant of the URL', async () => {
    const id = unique();
    const q = `action=wbavailablebadges&format=json&${id}`;
    await api(q);
    expect(header(await api(q), 'x-cache')).toBe('hit');
    const purge = await http(`${gw.apiUrl}?${q}`, { method: 'PURGE' });
    expect(purge.status).toBe(200);
    expect(JSON.parse(purge.body).purged).toBe(1);
    expect(header(await api(q), 'x-cache')).toBe('miss');
  });

  it('the admin listener purges by module', async () => {
    const id = unique();
    await api(`action=wbavailablebadges&format=json&${id}`);
    const res = await http(`${gw.adminUrl}/purge?module=wbavailablebadges`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(res.body).purged).toBeGreaterThanOrEqual(1);
    expect(header(await api(`action=wbavailablebadges&format=json&${id}`), 'x-cache')).toBe('miss');
  });

  it('a client no-cache never evicts a shared entry', async () => {
    const id = unique();
    const q = `action=wbavailablebadges&format=json&${id}`;
    await api(q);
    const noCache = await api(q, { 'cache-control': 'no-cache', pragma: 'no-cache' });
    expect(header(noCache, 'x-cache')).toBe('hit');
    expect(await reachedWiki(id)).toBe(1);
  });
});
