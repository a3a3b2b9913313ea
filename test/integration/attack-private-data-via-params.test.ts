// Attack classes 1 and 8 (T26565: private API data served from a shared proxy via smaxage):
// whatever a session holder adds (smaxage, maxage, uselang), nothing it receives enters the
// shared tier, and concurrent identical requests from different identities never share an answer.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, loginCookies } from '../support/wiki.js';

describe('private data through request parameters', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  let admin: string;
  let user: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    [admin, user] = await Promise.all([loginCookies(wiki, ADMIN_USER, ADMIN_PASS), loginCookies(wiki, LAB_USER, LAB_USER_PASS)]);
  });
  afterAll(() => gw.close());

  it.each([
    'action=query&meta=userinfo&format=json&smaxage=3600&maxage=3600',
    'action=query&meta=userinfo&format=json&smaxage=3600&uselang=content',
    'action=query&list=filearchive&faprop=sha1|size|user&format=json&smaxage=600&maxage=600&uselang=en',
    'action=query&meta=siteinfo|userinfo&format=json&smaxage=60&uselang=content',
    'action=wbavailablebadges&format=json&uselang=content',
    'action=query&meta=siteinfo&format=json&uselang=content&smaxage=60&maxage=60',
  ])('a session holder asking %s never fills the shared tier', async (q) => {
    const before = gw.built.gateway.store.stats('shared').entries;
    const query = `${q}&requestid=${randomUUID()}`;
    const first = await http(`${gw.apiUrl}?${query}`, { headers: { cookie: admin } });
    const second = await http(`${gw.apiUrl}?${query}`, { headers: { cookie: admin } });
    expect(first.status).toBe(200);
    expect(gw.built.gateway.store.stats('shared').entries).toBe(before);
    // Its client-facing Cache-Control never says public, even when the wiki said so.
    expect(header(second, 'cache-control') ?? '').not.toMatch(/public/);
    const anon = await http(`${gw.apiUrl}?${query}`);
    expect(header(anon, 'x-cache')).not.toBe('hit');
    expect(anon.body).not.toContain(ADMIN_USER === 'Admin' ? '"name":"Admin"' : ADMIN_USER);
  });

  it('concurrent identical requests from three identities: each receives its own answer', async () => {
    const q = `${gw.apiUrl}?action=query&meta=userinfo&format=json&requestid=${randomUUID()}`;
    const who = [admin, user, undefined, admin, user, undefined, admin, user, undefined];
    const answers = await Promise.all(who.map((cookie) => http(q, { headers: cookie ? { cookie } : {} })));
    answers.forEach((a, i) => {
      const info = JSON.parse(a.body).query.userinfo;
      if (who[i] === admin) expect(info.name).toBe(ADMIN_USER);
      else if (who[i] === user) expect(info.name).toBe(LAB_USER);
      else expect(info.anon).toBeDefined();
    });
  });
});
