// Security round 2, class 4: logout and writes on every path. A logout through the UI
// (POST index.php?title=Special:UserLogout, streamed through) left the session's private entries
// alive for their TTL. Any answer on any path that deletes a session cookie, and any write by a
// session holder on any path, evicts that session's entries.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, setCookieNames } from '../support/http.js';
import { apiLogout, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

describe('a session ends, or writes, on index.php', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki);
  });
  afterAll(() => gw.close());

  /** A session entry that hits, and the session's cookie. */
  async function cachedSession(): Promise<{ cookie: string; url: string }> {
    const cookie = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    const url = `${gw.apiUrl}?action=query&meta=userinfo&format=json&requestid=${randomUUID()}`;
    await http(url, { headers: { cookie } });
    const hit = await http(url, { headers: { cookie } });
    expect(header(hit, 'x-cache')).toBe('hit');
    expect(JSON.parse(hit.body).query.userinfo.name).toBe(LAB_USER);
    return { cookie, url };
  }

  it('POST index.php?title=Special:UserLogout (streamed through) evicts the session`s entries', async () => {
    const { cookie, url } = await cachedSession();
    // The form's own token (HTMLForm salts it), as a browser would post it.
    const form = await http(`${gw.url}/w/index.php?title=Special:UserLogout`, { headers: { cookie } });
    const token = /value="([^"]*)" name="wpEditToken"/.exec(form.body)![1]!.replace(/&#92;/g, '\\');
    const logout = await http(`${gw.url}/w/index.php?title=Special:UserLogout`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ title: 'Special:UserLogout', wpEditToken: token, redirectparams: '' }).toString(),
    });
    expect(logout.status).toBeLessThan(400);
    expect(setCookieNames(logout)).toContain('wiki_session');
    const after = await http(url, { headers: { cookie } });
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(after.body).query.userinfo.name).not.toBe(LAB_USER);
  });

  // Security round 3: api.php's login suppression (callback=, origin=*, Treat-as-Untrusted) was
  // applied to index.php too, which ignores those markers: the wiki logged the user out, the
  // gateway took the request for an anonymous one and evicted nothing.
  for (const [marker, extra] of [
    ['callback=1', { query: '&callback=1', headers: {} }],
    ['origin=*', { query: '&origin=*', headers: {} }],
    ['Treat-as-Untrusted', { query: '', headers: { 'treat-as-untrusted': '1' } }],
  ] as const) {
    it(`a UI logout carrying ${marker} (api.php's markers, which index.php ignores) evicts the session's entries`, async () => {
      const { cookie, url } = await cachedSession();
      const form = await http(`${gw.url}/w/index.php?title=Special:UserLogout`, { headers: { cookie } });
      const token = /value="([^"]*)" name="wpEditToken"/.exec(form.body)![1]!.replace(/&#92;/g, '\\');
      const logout = await http(`${gw.url}/w/index.php?title=Special:UserLogout${extra.query}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...extra.headers },
        body: new URLSearchParams({ title: 'Special:UserLogout', wpEditToken: token, redirectparams: '' }).toString(),
      });
      expect(setCookieNames(logout)).toContain('wiki_session');
      const after = await http(url, { headers: { cookie } });
      expect(header(after, 'x-cache')).not.toBe('hit');
      expect(JSON.parse(after.body).query.userinfo.name).not.toBe(LAB_USER);
    });
  }

  it('any write through index.php by a session holder evicts its entries', async () => {
    const { cookie, url } = await cachedSession();
    const post = await http(`${gw.url}/w/index.php?title=Sandbox_${randomUUID()}&action=submit`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'wpTextbox1=x&wpSummary=y',
    });
    expect(post.status).toBeLessThan(500);
    const after = await http(url, { headers: { cookie } });
    expect(header(after, 'x-cache')).not.toBe('hit');
  });

  it('a GET through index.php whose answer deletes the session cookie evicts too (a logout made elsewhere)', async () => {
    const { cookie, url } = await cachedSession();
    // Logged out straight at the wiki: the gateway did not see it, its entries are still there.
    await apiLogout(wiki, cookie);
    // The next page view through the gateway: the wiki fails to load the session and deletes it.
    const page = await http(`${gw.url}/w/index.php?title=Main_Page`, { headers: { cookie } });
    expect(setCookieNames(page)).toContain('wiki_session');
    const after = await http(url, { headers: { cookie } });
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(after.body).query.userinfo.name).not.toBe(LAB_USER);
  });

  it('a GET through index.php by a session holder leaves them alone', async () => {
    const { cookie, url } = await cachedSession();
    await http(`${gw.url}/w/index.php?title=Main_Page`, { headers: { cookie } });
    const after = await http(url, { headers: { cookie } });
    expect(header(after, 'x-cache')).toBe('hit');
  });
});
