// Security round 2, class 2: debuginfo on every route that reaches api.php, and every copy of it.
// With $wgDebugToolbar, MediaWiki echoes the request's Cookie header (and all SQL) in a debuginfo
// block, and in the toolbar's `mw.config.set({"debugInfo":…})` copy inside HTML it renders
// (action=help&wrap=1, any *fm format). The gateway strips every copy or refuses the answer
// (502), on every target a web server runs api.php for, never storing a cookie echo.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { storedAnswers } from '../support/entries.js';
import { header, rawTarget } from '../support/http.js';
import { LAB_USER, LAB_USER_PASS, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');

describe('debuginfo never leaks, whatever the route or the copy', () => {
  let gw: RunningGateway;
  let cookie: string;
  let secret: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    cookie = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    secret = /wiki_session=([^;]+)/.exec(cookie)![1]!;
    await setWikiToggle(wikiData, { debug: true });
  });
  afterAll(async () => {
    await setWikiToggle(wikiData, { debug: false });
    await gw.close();
  });

  /** Nothing stored holds the session id or a debuginfo block. */
  function expectCacheClean() {
    gw.built.gateway.store.purgeWhere((entry) => {
      // Stored compressed: what the client would get, decoded.
      for (const answer of storedAnswers(entry)) {
        const body = answer.toString('latin1');
        expect(body).not.toContain(secret);
        expect(body).not.toContain('"debuginfo"');
      }
      return false;
    });
  }

  it.each(['json', 'json&callback=cb', 'xml', 'php', 'jsonfm', 'rawfm', 'xmlfm', 'json&formatversion=2', 'jsonfm&wrappedhtml=1', ''])(
    'action=help&wrap=1&format=%s: the toolbar copy is stripped or the answer refused',
    async (format) => {
      const target = `/w/api.php?action=help&wrap=1${format ? `&format=${format}` : ''}`;
      // The premise: the wiki echoes the cookie in this answer.
      const direct = await rawTarget(wiki, target, { headers: { cookie } });
      expect(direct.body).toContain(secret);
      const res = await rawTarget(gw.url, target, { headers: { cookie } });
      if (res.status === 502) expect(header(res, 'mediawiki-api-error')).toBe('wikiedge-upstream-bad-response');
      else {
        expect(res.status).toBe(200);
        expect(res.body).not.toContain(secret);
        expect(res.body).not.toMatch(/config\.set\(\{(\\|&quot;|")*debugInfo/);
      }
      expectCacheClean();
    },
  );

  it.each([
    '/w/%61pi.php',
    '/w//api.php',
    '/W/API.PHP',
    '/w/api%2Ephp',
    '/w%2Fapi.php',
    '/w%252Fapi.php',
    '/x/../w/api.php',
    '/w/./api.php',
    '/w/api.php/extra',
    '/w\\api.php',
  ])('%s (a path a server runs api.php for) loses its debuginfo too', async (path) => {
    const target = `${path}?action=query&meta=siteinfo&format=json`;
    const direct = await rawTarget(wiki, target, { headers: { cookie } });
    const res = await rawTarget(gw.url, target, { headers: { cookie } });
    if (direct.body.includes(secret)) {
      // The wiki ran api.php for it: the gateway must have treated it as api.php.
      expect(res.status).toBe(200);
      expect(res.body).not.toContain(secret);
      expect(res.body).not.toContain('debuginfo');
      expect(header(res, 'x-cache')).toBe('pass');
    } else {
      // This wiki's server does not map it to api.php: whatever it answers holds no echo.
      expect(res.body).not.toContain(secret);
    }
    expectCacheClean();
  });
});
