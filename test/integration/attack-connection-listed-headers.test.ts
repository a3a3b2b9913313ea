// Security round 2, class 1 (identity): a header the gateway drops before forwarding (hop-by-hop,
// or named in `Connection`, RFC 9110 §7.6.1) never reaches the wiki, so it must not decide the
// identity or the key. `Connection: Treat-as-Untrusted` with `Treat-as-Untrusted: 1` and a
// session cookie: the wiki sees no Treat-as-Untrusted and answers as the logged-in user; a
// gateway that read the raw header filed that answer as login-suppressed, i.e. anonymous.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, rawTarget } from '../support/http.js';
import { ADMIN_PASS, ADMIN_USER, loginCookies } from '../support/wiki.js';

describe('headers named in Connection decide nothing', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  let admin: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  });
  afterAll(() => gw.close());

  const path = () => `/w/api.php?action=query&list=allpages&assert=user&uselang=content&format=json&requestid=${randomUUID()}`;

  it('Connection: Treat-as-Untrusted: the logged-in answer stays in the session`s slot', async () => {
    const target = path();
    const res = await rawTarget(gw.url, target, {
      headers: { cookie: admin, connection: 'keep-alive, Treat-as-Untrusted', 'treat-as-untrusted': '1' },
    });
    expect(res.status).toBe(200);
    // The wiki did serve the logged-in user: assert=user passed.
    expect(header(res, 'mediawiki-api-error')).toBeUndefined();
    expect(header(res, 'mediawiki-login-suppressed')).toBeUndefined();
    expect(header(res, 'cache-control') ?? '').not.toMatch(/public/);
    expect(gw.built.gateway.store.stats('shared').entries).toBe(0);
    const anon = await http(`${gw.url}${target}`);
    expect(header(anon, 'x-cache')).not.toBe('hit');
    expect(header(anon, 'mediawiki-api-error')).toBe('assertuserfailed');
  });

  it('Connection: Cookie: the wiki answers anonymously, and so the answer is the anonymous one', async () => {
    const target = `/w/api.php?action=query&meta=siteinfo&uselang=content&format=json&requestid=${randomUUID()}`;
    const first = await rawTarget(gw.url, target, { headers: { cookie: admin, connection: 'cookie' } });
    expect(first.status).toBe(200);
    expect(header(first, 'x-cache')).toBe('miss');
    // Filed as what the wiki made it: an anonymous, shared answer.
    const anon = await http(`${gw.url}${target}`);
    expect(header(anon, 'x-cache')).toBe('hit');
  });
});
