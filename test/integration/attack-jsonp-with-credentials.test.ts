// Security round 2, class 1: a request MediaWiki serves anonymously although it carries a
// session (callback= JSONP, origin=*, Treat-as-Untrusted: ApiMain::lacksSameOriginSecurity)
// gets the Cache-Control the wiki would send it. The wiki still loads the session and answers
// anon-public-user-private modules `private` then; a shared entry's public form must not
// reach such a client (a cache between it and us would keep an answer made for a session).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, loginCookies } from '../support/wiki.js';

describe('login-suppressed requests that carry a session', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  });
  afterAll(() => gw.close());

  it.each([
    ['callback=', 'callback=cb', {}],
    ['origin=*', 'origin=*', {}],
    ['Treat-as-Untrusted', '', { 'treat-as-untrusted': '1' }],
  ] as const)('%s: the wiki says private to it, and so does the gateway, on a miss and on a hit', async (_what, extra, headers) => {
    const q = `action=query&meta=siteinfo&format=json&smaxage=60&maxage=60${extra ? `&${extra}` : ''}&requestid=${randomUUID()}`;
    const direct = await http(`${wiki}/w/api.php?${q}`, { headers: { ...headers, cookie: admin } });
    expect(header(direct, 'cache-control')).toMatch(/^private/);
    // Anonymous first: the shared entry is made and says public.
    const anon = await http(`${gw.apiUrl}?${q}`, { headers });
    expect(header(anon, 'cache-control')).toMatch(/public/);
    const hit = await http(`${gw.apiUrl}?${q}`, { headers: { ...headers, cookie: admin } });
    expect(header(hit, 'x-cache')).toBe('hit');
    expect(header(hit, 'cache-control')).toBe(header(direct, 'cache-control'));
    expect(header(hit, 'expires')).toBeUndefined();
    // The answer itself is the anonymous one: the wiki suppressed the login.
    expect(hit.body).toBe(anon.body);
  });

  it('a miss for such a request is private for its client too', async () => {
    const q = `action=query&meta=siteinfo&format=json&uselang=content&smaxage=60&maxage=60&callback=cb&requestid=${randomUUID()}`;
    const miss = await http(`${gw.apiUrl}?${q}`, { headers: { cookie: admin } });
    expect(header(miss, 'x-cache')).toMatch(/miss|pass/);
    expect(header(miss, 'cache-control')).toMatch(/^private/);
  });
});
