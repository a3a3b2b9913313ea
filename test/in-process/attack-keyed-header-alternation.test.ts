// Attack class 4, on the fresh-hit path: a request the gateway remembers keeps its cache key for
// the keyed headers it last saw (src/steps/fresh-hit.ts, HitMemo). Alternating those headers on one
// URL (X-Forwarded-Proto from a trusted proxy, Origin with an origin parameter) must give every
// request its own variant, never the one the memo was made for.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { answerPublicEchoingHeaders, echoedHeaders } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';

describe('keyed headers alternating on one remembered URL', () => {
  // Loopback (the test client) is a trusted proxy: its X-Forwarded-Proto is believed and keyed.
  const t = gatewayOnFake(answerPublicEchoingHeaders, { WIKIEDGE_TRUSTED_PROXIES: '127.0.0.1' });

  it('X-Forwarded-Proto https / http / https…: each answer is its own scheme, hits included', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`;
    const dispositions: string[] = [];
    for (let i = 0; i < 12; i++) {
      const proto = i % 2 === 0 ? 'https' : 'http';
      const res = await http(q, { headers: { 'x-forwarded-proto': proto } });
      expect(res.status).toBe(200);
      expect(echoedHeaders(res)['x-forwarded-proto'], `request ${i}`).toBe(proto);
      dispositions.push(String(header(res, 'x-cache')));
    }
    expect(dispositions.slice(0, 2)).toEqual(['miss', 'miss']);
    expect(dispositions.slice(2)).toEqual(Array(10).fill('hit'));
    expect(t.fake.requests.filter((r) => r.url?.includes('requestid')).length).toBeGreaterThanOrEqual(2);
  });

  it('Origin a / b / a…: each answer is its own origin, hits included', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&origin=*&requestid=${randomUUID()}`;
    const dispositions: string[] = [];
    for (let i = 0; i < 12; i++) {
      const origin = i % 2 === 0 ? 'https://a.example' : 'https://b.example';
      const res = await http(q, { headers: { origin } });
      expect(res.status).toBe(200);
      expect(echoedHeaders(res)['origin'], `request ${i}`).toBe(origin);
      dispositions.push(String(header(res, 'x-cache')));
    }
    expect(dispositions.slice(2)).toEqual(Array(10).fill('hit'));
  });
});
