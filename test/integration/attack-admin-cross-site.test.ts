// Security round 2, class 6: the admin listener. POST /purge accepted a CORS "simple request"
// (text/plain, any Origin, any Host): a page open in the operator's browser, or a DNS-rebound
// name, could empty the cache. Mutating admin requests now refuse what a browser could send
// cross-site, and need WIKIEDGE_ADMIN_TOKEN when it is set; /metrics, /healthz, /readyz stay open.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

const TOKEN = 'admin-token-for-the-tests-0123456789';

describe('without an admin token', () => {
  let gw: RunningGateway;
  let url: string;
  beforeAll(async () => {
    gw = await startGateway(inject('wikiUrl'));
    url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
  });
  afterAll(() => gw.close());

  const stillCached = async () => expect(header(await http(url), 'x-cache')).toBe('hit');

  it.each([
    ['a text/plain simple request from another origin', { 'content-type': 'text/plain', origin: 'https://evil.example' }],
    ['a form post', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no content type at all (fetch no-cors)', {}],
    ['a DNS-rebound name as Host', { 'content-type': 'application/json', host: 'rebound.evil.example:8081' }],
    ['JSON with a cross-site Origin', { 'content-type': 'application/json', origin: 'https://evil.example' }],
    ['JSON with Sec-Fetch-Site: cross-site', { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' }],
  ] as const)('refuses %s, and purges nothing', async (_what, headers) => {
    await http(url);
    const res = await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { ...headers } });
    expect([403, 415]).toContain(res.status);
    await stillCached();
  });

  it('accepts a JSON request to an IP or localhost Host (curl, scripts)', async () => {
    await http(url);
    const res = await http(`${gw.adminUrl}/purge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: url.replace(/^http:\/\/[^/]+/, '') }),
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).purged).toBe(1);
  });

  it('/metrics, /healthz and /readyz stay open', async () => {
    for (const path of ['/metrics', '/healthz']) {
      const res = await http(`${gw.adminUrl}${path}`, { headers: { origin: 'https://evil.example' } });
      expect(res.status).toBe(200);
    }
  });
});

describe('with WIKIEDGE_ADMIN_TOKEN', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(inject('wikiUrl'), { WIKIEDGE_ADMIN_TOKEN: TOKEN });
  });
  afterAll(() => gw.close());

  it('a purge without the token is 401 with WWW-Authenticate', async () => {
    const res = await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
    expect(header(res, 'www-authenticate')).toMatch(/^Bearer/);
  });

  it('a wrong token is 401', async () => {
    const res = await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(res.status).toBe(401);
  });

  it('the token works from any Host and content type; module= takes the metrics label', async () => {
    const url = `${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    await http(url);
    expect(header(await http(url), 'x-cache')).toBe('hit');
    const res = await http(`${gw.adminUrl}/purge?module=${encodeURIComponent('query+siteinfo')}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, host: 'wikiedge-admin.internal:8081' },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).purged).toBe(1);
    expect(header(await http(url), 'x-cache')).toBe('miss');
  });

  it('the answer says when nothing matched', async () => {
    const res = await http(`${gw.adminUrl}/purge?module=feedrecentchanges`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(JSON.parse(res.body)).toMatchObject({ purged: 0, note: expect.stringMatching(/nothing matched/) });
  });

  it('the token is never logged or printed in the effective configuration', () => {
    expect(JSON.stringify(gw.logs)).not.toContain(TOKEN);
  });
});
