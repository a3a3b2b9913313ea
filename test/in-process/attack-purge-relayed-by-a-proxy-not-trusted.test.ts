// PURGE is taken from WIKIEDGE_PURGE_ALLOW; a trusted proxy's X-Forwarded-For names the client,
// who must be allowed too (test/integration/purge-trust.test.ts). A proxy in the allow list but
// not among WIKIEDGE_TRUSTED_PROXIES (compose.yaml allows the wiki network's range; a front nginx
// attached to that network gets an address in it before the operator lists it as trusted) relays
// any internet client's PURGE with X-Forwarded-For naming that client, which was then ignored:
// the PURGE was the proxy's own, and any client could evict any URL, and have the gateway ask the
// wiki to confirm every page it named. A PURGE that says it was relayed (X-Forwarded-For,
// Forwarded, X-Real-IP) is taken only from a trusted proxy, for a client that may purge.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

describe('a PURGE relayed by a proxy that may purge but is not trusted', () => {
  // Loopback (the peer here) may purge; it is no trusted proxy.
  const t = gatewayOnFake(answerPublic('{"batchcomplete":""}'), { WIKIEDGE_PURGE_ALLOW: '127.0.0.0/8,::1', WIKIEDGE_TRUSTED_PROXIES: '192.0.2.1' });

  it.each([
    ['X-Forwarded-For', { 'x-forwarded-for': '203.0.113.9' }],
    ['X-Forwarded-For naming an allowed address', { 'x-forwarded-for': '127.0.0.1' }],
    ['Forwarded', { forwarded: 'for=203.0.113.9' }],
    ['X-Real-IP', { 'x-real-ip': '203.0.113.9' }],
    ['Via', { via: '1.1 front-proxy' }],
    ['CF-Connecting-IP', { 'cf-connecting-ip': '203.0.113.9' }],
  ])('naming its client in %s: 405, and the entry stays', async (_, headers) => {
    const url = `${t.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    await http(url);
    const purge = await http(url, { method: 'PURGE', headers });
    expect(purge.status).toBe(405);
    expect(header(await http(url), 'x-cache')).toBe('hit');
  });

  it('sent by the allowed peer itself (MediaWiki`s own PURGE): taken', async () => {
    const url = `${t.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    await http(url);
    expect((await http(url, { method: 'PURGE' })).status).toBe(200);
    expect(header(await http(url), 'x-cache')).toBe('miss');
  });
});
