// Security, class 28: a cookie that is no credential, which the wiki reads and the key does not
// hold. MediaWiki 1.39's ResourceLoader::inDebugMode() takes `resourceLoaderDebug` from the
// request's cookies: every page head it builds changes (load.php?debug=1, unminified RLCONF), and
// the wiki still marks the answer public (`Vary: Cookie`). A client sending that cookie filled the
// shared entry for everyone, and with MediaWiki's after-edit cookies (`UseCDNCache=false`,
// `UseDC=master`), which make the gateway fetch afresh, overwrote a fresh one at will. A
// credential-less request's answer is stored for everyone, so the wiki is now asked without
// the client's cookies: what is stored is what a client without cookies gets straight from the
// wiki, whatever cookie the first client sent.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

/** The page head's ResourceLoader startup script, as a cookieless reader must get it. */
const DEBUG_STARTUP = /load\.php\?debug=/;
const startupScript = (body: string): string | undefined => /src=\\"([^"\\]*modules=startup[^"\\]*)\\"/.exec(body)?.[1];

describe('a cookie the wiki reads but the key does not hold', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
  });
  afterAll(async () => {
    await gw.close();
  });

  const headHtml = () => `?action=parse&page=Main_Page&prop=headhtml&format=json&formatversion=2&requestid=${randomUUID()}`;

  it('the wiki itself: the cookie changes the page head of a public answer', async () => {
    const q = `${wiki}/w/api.php${headHtml()}&smaxage=60&maxage=60`;
    const plain = await http(q);
    const debug = await http(q, { headers: { cookie: 'resourceLoaderDebug=true' } });
    expect(plain.body).not.toMatch(DEBUG_STARTUP);
    expect(debug.body).toMatch(DEBUG_STARTUP);
    expect(header(debug, 'cache-control')).toMatch(/public/);
  });

  it('resourceLoaderDebug on the miss does not become the page head every reader gets', async () => {
    const q = `${gw.apiUrl}${headHtml()}`;
    const attacker = await http(q, { headers: { cookie: 'resourceLoaderDebug=true' } });
    expect(header(attacker, 'x-cache')).toBe('miss');
    const victim = await http(q);
    expect(header(victim, 'x-cache')).toBe('hit');
    expect(victim.body).not.toMatch(DEBUG_STARTUP);
    // The page head a reader without cookies gets straight from the wiki (RLCONF itself differs
    // from request to request: wgRequestId, wgBackendResponseTime).
    const direct = await http(`${wiki}/w/api.php${new URL(q).search}`);
    expect(startupScript(direct.body)).toContain('modules=startup');
    expect(startupScript(victim.body)).toBe(startupScript(direct.body));
  });

  it('with the after-edit cookies, it does not overwrite a fresh entry either', async () => {
    const q = `${gw.apiUrl}${headHtml()}`;
    expect(header(await http(q), 'x-cache')).toBe('miss');
    for (const cookie of ['UseCDNCache=false; resourceLoaderDebug=true', 'UseDC=master; resourceLoaderDebug=2']) {
      const attacker = await http(q, { headers: { cookie } });
      expect(header(attacker, 'x-cache')).toBe('bypass');
      const victim = await http(q);
      expect(header(victim, 'x-cache')).toBe('hit');
      expect(victim.body).not.toMatch(DEBUG_STARTUP);
    }
  });

  it('the HTML formats (jsonfm) alike', async () => {
    const q = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=general&format=jsonfm&smaxage=60&requestid=${randomUUID()}`;
    await http(q, { headers: { cookie: 'resourceLoaderDebug=true' } });
    const victim = await http(q);
    expect(header(victim, 'x-cache')).toBe('hit');
    expect(victim.body).not.toMatch(DEBUG_STARTUP);
  });
});
