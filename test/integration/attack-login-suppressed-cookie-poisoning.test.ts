// Security, class 28 through class 16's door (docs/SECURITY.md; commit cabe6cf). A login-suppressed
// request (origin=*, callback=, Treat-as-Untrusted) that carries a credential keeps its cookies
// on the way to the wiki, so that the wiki loads its session and answers `private` (class 16).
// But when the "credential" loads no session (`wikiLoggedOut`, which the gateway counts as a
// credential, or any name the credential net takes for one: `x_session`), the wiki answers
// `public`, shaped by the request's other cookies (`resourceLoaderDebug`): the gateway stored it
// under the anonymous key, and every reader of that URL got the attacker's page head; with the
// after-edit cookies it overwrote a fresh entry at will. An answer the wiki made with a client's
// cookies is now never shared: such a request is fetched for itself alone.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

/** The page head's ResourceLoader startup script in debug mode. */
const DEBUG_STARTUP = /load\.php\?debug=/;

describe('login-suppressed requests carrying a cookie the wiki reads', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
  });
  afterAll(async () => {
    await gw.close();
  });

  const headHtml = (extra: string) =>
    `?action=parse&page=Main_Page&prop=headhtml&format=json&formatversion=2&uselang=content${extra}&requestid=${randomUUID()}`;

  it('the wiki itself: such a "credential" loads no session, and the answer is public and in debug mode', async () => {
    const direct = await http(`${wiki}/w/api.php${headHtml('&origin=*&smaxage=60')}`, { headers: { cookie: 'wikiLoggedOut=1; resourceLoaderDebug=true' } });
    expect(header(direct, 'cache-control')).toMatch(/public/);
    expect(direct.body).toMatch(DEBUG_STARTUP);
  });

  for (const [name, extra, requestHeaders] of [
    ['origin=*', '&origin=*', {}],
    ['callback= (JSONP)', '&callback=cb', {}],
    ['Treat-as-Untrusted', '', { 'treat-as-untrusted': '1' }],
  ] as const) {
    for (const credential of ['wikiLoggedOut=1', 'x_session=1']) {
      it(`${name}, ${credential}: the attacker's answer is not stored for the others`, async () => {
        const q = `${gw.apiUrl}${headHtml(extra)}`;
        const attacker = await http(q, { headers: { ...requestHeaders, cookie: `${credential}; resourceLoaderDebug=true` } });
        expect(attacker.status).toBe(200);
        expect(header(attacker, 'x-cache')).toBe('pass');
        expect(header(attacker, 'cache-control')).toMatch(/^private/);
        const victim = await http(q, { headers: requestHeaders });
        expect(header(victim, 'x-cache')).toBe('miss');
        expect(victim.body).not.toMatch(DEBUG_STARTUP);
        const again = await http(q, { headers: requestHeaders });
        expect(header(again, 'x-cache')).toBe('hit');
        expect(again.body).not.toMatch(DEBUG_STARTUP);
      });
    }
  }

  it('with the after-edit cookies, it does not overwrite a fresh entry either', async () => {
    const q = `${gw.apiUrl}${headHtml('&origin=*')}`;
    expect(header(await http(q), 'x-cache')).toBe('miss');
    for (const cookie of ['UseCDNCache=false; x_session=1; resourceLoaderDebug=true', 'UseDC=master; wikiLoggedOut=1; resourceLoaderDebug=2']) {
      const attacker = await http(q, { headers: { cookie } });
      expect(header(attacker, 'x-cache')).toBe('pass');
      const victim = await http(q);
      expect(header(victim, 'x-cache')).toBe('hit');
      expect(victim.body).not.toMatch(DEBUG_STARTUP);
    }
  });

  it('a real session under origin=* still gets the shared answer, marked private (class 16)', async () => {
    const q = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=general&format=json&origin=*&requestid=${randomUUID()}`;
    expect(header(await http(q), 'x-cache')).toBe('miss');
    const withSession = await http(q, { headers: { cookie: 'wiki_session=abcdefabcdefabcdefabcdefabcdefab' } });
    expect(header(withSession, 'x-cache')).toBe('hit');
    expect(header(withSession, 'cache-control')).toMatch(/^private/);
  });
});
