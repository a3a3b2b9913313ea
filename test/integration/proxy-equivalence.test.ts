// Through the gateway, each answer equals the wiki's direct answer: status, body (volatile fields
// aside) and the headers MediaWiki sets.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, setCookieNames, type TestResponse, withoutVolatile } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

const MEDIAWIKI_HEADERS = [
  'cache-control',
  'vary',
  'content-type',
  'mediawiki-api-error',
  'mediawiki-login-suppressed',
  'x-content-type-options',
  'x-frame-options',
  'content-disposition',
  'content-language',
];

function expectSameAnswer(viaGateway: TestResponse, direct: TestResponse): void {
  expect(viaGateway.status).toBe(direct.status);
  for (const name of MEDIAWIKI_HEADERS) expect.soft(header(viaGateway, name), name).toBe(header(direct, name));
  expect(header(viaGateway, 'expires') === undefined).toBe(header(direct, 'expires') === undefined);
  expect(setCookieNames(viaGateway)).toEqual(setCookieNames(direct));
  expect(withoutVolatile(viaGateway.body)).toBe(withoutVolatile(direct.body));
}

describe('proxying api.php to the real wiki', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
  });
  afterAll(() => gw.close());

  const both = (query: string, headers: Record<string, string> = {}, method = 'GET') =>
    Promise.all([http(`${gw.apiUrl}?${query}`, { method, headers }), http(`${wiki}/w/api.php?${query}`, { method, headers })]);

  it('action=wbavailablebadges, format=json', async () => {
    const [a, b] = await both('action=wbavailablebadges&format=json');
    expectSameAnswer(a, b);
    expect(JSON.parse(a.body)).toEqual({ badges: [] });
    expect(header(a, 'cache-control')).toBe('max-age=3600, s-maxage=3600, public');
  });

  it('action=wbavailablebadges with format omitted (the HTML rendering)', async () => {
    const [a, b] = await both('action=wbavailablebadges');
    expectSameAnswer(a, b);
    expect(header(a, 'content-type')).toMatch(/^text\/html/);
  });

  it('list=filearchive, anonymous', async () => {
    const [a, b] = await both('action=query&list=filearchive&format=json');
    expectSameAnswer(a, b);
    // The 3 seeded deleted files, and any another test of the suite deleted (invalidation-by-purges).
    expect(JSON.parse(a.body).query.filearchive.length).toBeGreaterThanOrEqual(3);
  });

  it('list=filearchive, logged in as the admin', async () => {
    const cookie = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    const [a, b] = await both('action=query&list=filearchive&faprop=sha1|size&format=json', { cookie });
    expectSameAnswer(a, b);
    expect(JSON.parse(a.body).query.filearchive[0]).toHaveProperty('sha1');
  });

  it('meta=siteinfo, with and without maxage', async () => {
    for (const q of ['action=query&meta=siteinfo&format=json', 'action=query&meta=siteinfo&format=json&maxage=60&smaxage=60']) {
      const [a, b] = await both(q);
      expectSameAnswer(a, b);
    }
  });

  it('meta=siteinfo with maxage only: Cache-Control and Expires as the wiki sends them', async () => {
    const [a, b] = await both('action=query&meta=siteinfo&format=json&maxage=30');
    expectSameAnswer(a, b);
    expect(header(a, 'expires')).toBe(header(b, 'expires'));
  });

  it('clientlogin by POST through the gateway, then a request with that session', async () => {
    const cookie = await loginCookies(gw.apiUrl, LAB_USER, LAB_USER_PASS);
    expect(cookie).toMatch(/wiki_session=/);
    const [a, b] = await both('action=query&meta=userinfo&format=json', { cookie });
    expectSameAnswer(a, b);
    expect(JSON.parse(a.body).query.userinfo.name).toBe(LAB_USER);
  });

  it('HEAD', async () => {
    const [a, b] = await both('action=query&meta=siteinfo&format=json&maxage=60&smaxage=60', {}, 'HEAD');
    expect(a.status).toBe(200);
    expect(a.body).toBe('');
    for (const name of MEDIAWIKI_HEADERS) expect.soft(header(a, name), name).toBe(header(b, name));
  });

  it('a HEAD the gateway passes: the wiki’s headers, and a Content-Length only its GET’s (RFC 9110 §8.6)', async () => {
    const query = 'action=query&list=random&rnlimit=1&format=json';
    const [a, b] = await both(query, { 'accept-encoding': 'gzip' }, 'HEAD');
    expect(header(a, 'x-cache')).toBe('pass');
    expect(a.body).toBe('');
    for (const name of MEDIAWIKI_HEADERS) expect.soft(header(a, name), name).toBe(header(b, name));
    const get = await http(`${gw.apiUrl}?${query}`, { headers: { 'accept-encoding': 'gzip' } });
    // A random page's answer differs in length from one GET to the next; it is never empty.
    expect(Number(header(a, 'content-length'))).toBeGreaterThan(0);
    expect(header(a, 'content-encoding')).toBe(header(get, 'content-encoding'));
  });

  it('an unknown action: HTTP 200 with MediaWiki-API-Error passed through', async () => {
    const [a, b] = await both('action=nosuch&format=json');
    expectSameAnswer(a, b);
    expect(header(a, 'mediawiki-api-error')).toBe('badvalue');
  });

  it('everything else is streamed through untouched (index.php)', async () => {
    const [a, b] = await Promise.all([http(`${gw.url}/w/index.php?title=Main_Page&action=raw`), http(`${wiki}/w/index.php?title=Main_Page&action=raw`)]);
    expect(a.status).toBe(b.status);
    expect(a.body).toBe(b.body);
    expect(header(a, 'x-cache')).toBe('pass');
  });

  it('returns the request id it forwarded', async () => {
    // A miss (hits are counted, not logged, by default): the line names the request id.
    const res = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=test-req-42-${Date.now()}`, {
      headers: { 'x-request-id': 'test-req-42' },
    });
    expect(header(res, 'x-request-id')).toBe('test-req-42');
    const line = gw.logs.find((l) => l['reqId'] === 'test-req-42' && l['msg'] === 'request');
    expect(line).toMatchObject({ method: 'GET', path: '/w/api.php', status: 200 });
  });
});
