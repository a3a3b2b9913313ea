// A session's answers are kept at most the session TTL: that is what bounds a logout made where
// the gateway could not see it. A public answer of a session kept its max-age instead, which the
// client chooses (`uselang=…&maxage=3600` makes MediaWiki answer `public, max-age=3600`): with
// `assert=user`, a session logged out straight at the wiki was told for an hour that it was
// still logged in (fixed in commit 96cd392).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { apiLogout, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

const SESSION_TTL_SECONDS = 3;

describe('a session`s public answer with a long max-age', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_TTL_SESSION_SECONDS: String(SESSION_TTL_SECONDS) });
  });
  afterAll(() => gw.close());

  it('is not served past the session TTL: a logout straight at the wiki shows then', async () => {
    const cookie = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    const q = `${gw.apiUrl}?action=query&list=allpages&aplimit=2&uselang=en&maxage=3600&assert=user&format=json&r=${Date.now()}`;
    // The wiki's own words: public, for an hour.
    const direct = await http(`${wiki}/w/api.php${new URL(q).search}`, { headers: { cookie } });
    expect(header(direct, 'cache-control')).toMatch(/public/);
    expect(header(direct, 'cache-control')).toMatch(/max-age=3600/);
    const first = await http(q, { headers: { cookie } });
    const storedAt = Date.now();
    expect(header(first, 'x-cache')).toBe('miss');
    expect(header(await http(q, { headers: { cookie } }), 'x-cache')).toBe('hit');

    await apiLogout(wiki, cookie);
    await sleep(Math.max(0, storedAt + SESSION_TTL_SECONDS * 1000 + 300 - Date.now()));
    const after = await http(q, { headers: { cookie } });
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(after.body).error?.code).toBe('assertuserfailed');
  });
});
