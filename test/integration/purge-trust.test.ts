// PURGE is accepted only from WIKIEDGE_PURGE_ALLOW (default: loopback), a list kept apart from
// WIKIEDGE_TRUSTED_PROXIES (whose X-Forwarded-* are believed): a TLS terminator trusted for
// client addresses must not thereby be able to purge. Others get 405 and evict nothing.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('PURGE from an address not in WIKIEDGE_PURGE_ALLOW', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Loopback is a trusted proxy here (its X-Forwarded-For is believed), but may not purge.
    gw = await startGateway(inject('wikiUrl'), { WIKIEDGE_PURGE_ALLOW: '192.0.2.10,10.0.0.0/8', WIKIEDGE_TRUSTED_PROXIES: '127.0.0.0/8,::1' });
  });
  afterAll(() => gw.close());

  it('gets 405 (with X-Cache and X-Request-Id) and the entry stays', async () => {
    const url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    await http(url);
    const purge = await http(url, { method: 'PURGE' });
    expect(purge.status).toBe(405);
    expect(header(purge, 'x-cache')).toBe('error');
    expect(header(purge, 'x-request-id')).toBeTruthy();
    expect(header(await http(url), 'x-cache')).toBe('hit');
  });

  it('an absolute-form PURGE (as MediaWiki sends it through $wgCdnServers) is refused too', async () => {
    const res = await http(`${gw.url}/w/index.php/Main_Page`, { method: 'PURGE' });
    expect(res.status).toBe(405);
  });
});

describe('PURGE from an address in WIKIEDGE_PURGE_ALLOW (a CIDR range)', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Not a trusted proxy (its X-Forwarded-For is not believed), but allowed to purge.
    gw = await startGateway(inject('wikiUrl'), { WIKIEDGE_PURGE_ALLOW: '127.0.0.0/8', WIKIEDGE_TRUSTED_PROXIES: '192.0.2.1' });
  });
  afterAll(() => gw.close());

  it('purges, and says purge in X-Cache', async () => {
    const url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    await http(url);
    const purge = await http(url, { method: 'PURGE' });
    expect(purge.status).toBe(200);
    expect(header(purge, 'x-cache')).toBe('purge');
    expect(JSON.parse(purge.body).purged).toBe(1);
    expect(header(await http(url), 'x-cache')).toBe('miss');
  });
});

describe('PURGE relayed by a trusted proxy on loopback (a TLS terminator on the same host)', () => {
  // The defaults: loopback may purge, and is a trusted proxy. The terminator relays its clients'
  // requests, PURGE among them (nginx's proxy_pass passes the method on): the client it names in
  // X-Forwarded-For must be allowed too, or any client on the internet could evict any URL
  // (fixed in commit 59f80cf).
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(inject('wikiUrl'), { WIKIEDGE_PURGE_ALLOW: '127.0.0.1,::1', WIKIEDGE_TRUSTED_PROXIES: '127.0.0.1,::1' });
  });
  afterAll(() => gw.close());

  it('an outside client named in X-Forwarded-For: 405, and the entry stays', async () => {
    const url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    await http(url);
    const purge = await http(url, { method: 'PURGE', headers: { 'x-forwarded-for': '203.0.113.9' } });
    expect(purge.status).toBe(405);
    expect(header(await http(url), 'x-cache')).toBe('hit');
  });

  it('a PURGE from loopback itself (the wiki on the same host), or naming a loopback client: allowed', async () => {
    const url = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    await http(url);
    expect((await http(url, { method: 'PURGE' })).status).toBe(200);
    expect(header(await http(url), 'x-cache')).toBe('miss');
    expect((await http(url, { method: 'PURGE', headers: { 'x-forwarded-for': '127.0.0.1' } })).status).toBe(200);
  });
});
