// Session identity and cookie normalisation against the real wiki: new sessions reach only the
// client that asked, a logout evicts that session's entries.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { apiLogout, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

function sessionCookieOf(setCookie: string | string[] | undefined): string | undefined {
  const lines = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
  return lines.map((l) => /^wiki_session=([^;]*)/.exec(l)?.[1]).find((v) => v !== undefined && v !== 'deleted');
}

describe('session cookies through the gateway', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(inject('wikiUrl'), MANY_CLIENTS_FROM_LOOPBACK);
  });
  afterAll(() => gw.close());

  it('20 concurrent anonymous requests that start sessions each get their own, never a shared one', async () => {
    const id = randomUUID();
    const answers = await Promise.all(Array.from({ length: 20 }, () => http(`${gw.apiUrl}?action=query&meta=tokens&type=login&format=json&requestid=${id}`)));
    const sessions = answers.map((a) => sessionCookieOf(a.headers['set-cookie']));
    expect(sessions.every((s) => s !== undefined)).toBe(true);
    expect(new Set(sessions).size).toBe(20);
    expect(answers.every((a) => header(a, 'x-cache') === 'pass')).toBe(true);
  });

  it('the session cookie of a clientlogin reaches only the client that logged in', async () => {
    const cookie = await loginCookies(gw.apiUrl, LAB_USER, LAB_USER_PASS);
    const session = /wiki_session=([^;]*)/.exec(cookie)?.[1];
    expect(session).toBeTruthy();
    const other = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`);
    expect(JSON.stringify(other.headers)).not.toContain(session!);
  });

  it('a logout evicts every cached entry of that session', async () => {
    const cookie = await loginCookies(gw.apiUrl, LAB_USER, LAB_USER_PASS);
    const q = `${gw.apiUrl}?action=query&meta=userinfo&format=json&requestid=${randomUUID()}`;
    await http(q, { headers: { cookie } });
    const cached = await http(q, { headers: { cookie } });
    expect(header(cached, 'x-cache')).toBe('hit');
    expect(JSON.parse(cached.body).query.userinfo.name).toBe(LAB_USER);

    const logout = await apiLogout(gw.apiUrl, cookie);
    expect(logout.status).toBe(200);
    // The wiki deletes the session cookie the client sent; the deletion is relayed.
    expect(header(logout, 'set-cookie')).toMatch(/wiki_session=deleted/);

    const after = await http(q, { headers: { cookie } });
    expect(header(after, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(after.body).query.userinfo.anon).toBeDefined();
    const evictions = await http(`${gw.adminUrl}/metrics`);
    expect(evictions.body).toMatch(/wikiedge_cookie_normalisations_total\{event="logout_eviction",cookie="session"\} [1-9]/);
  });

  it('deletions of cookies the client did not send never reach it; deletions of those it sent do', async () => {
    const res = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`, {
      headers: { cookie: 'wikiToken=0000; analytics=1' },
    });
    const lines = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
    expect(lines.some((l) => l.startsWith('wikiToken=deleted'))).toBe(true);
    expect(lines.some((l) => l.startsWith('wikiUserID='))).toBe(false);
    expect(lines.some((l) => l.startsWith('analytics='))).toBe(false);
  });
});
