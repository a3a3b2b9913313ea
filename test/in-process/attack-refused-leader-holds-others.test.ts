// Security round 2, class 21 (slow and cache-busting clients): a refusal must cost only the
// refused client. A client over its share of turns at the wiki is refused at the gate while it
// leads the fetch of a key, and its answer waits WIKIEDGE_CLIENT_REFUSAL_DELAY_MS. Another client
// asking for the same key meanwhile must not wait out that delay behind it: the refused request
// lets go of the coalesced fetch (and a Redis lock) before its answer waits.
import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { http } from '../support/http.js';

const DELAY_MS = 4_000;
const held: ServerResponse[] = [];

describe('a refused request that led a fetch', () => {
  const t = gatewayOnFake(
    (req, res) => {
      // `hold` stalls (it keeps its client's one turn); everything else is a public answer at once.
      if (req.url?.includes('hold=')) return void held.push(res);
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    },
    { WIKIEDGE_CLIENT_MAX_CONCURRENCY: '1', WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: String(DELAY_MS) },
  );

  it('does not hold up another client asking for the same answer', async () => {
    // The gateway trusts loopback's X-Forwarded-For (the default WIKIEDGE_TRUSTED_PROXIES): two clients.
    const spent = { headers: { 'x-forwarded-for': '203.0.113.1' } };
    const other = { headers: { 'x-forwarded-for': '203.0.113.2' } };
    const stalled = http(`${t.gw.apiUrl}?action=query&list=allpages&format=json&hold=${randomUUID()}`, spent);
    while (held.length === 0) await sleep(10);
    const url = `${t.gw.apiUrl}?action=query&list=allpages&format=json&requestid=${randomUUID()}`;
    const started = Date.now();
    const refused = http(url, spent); // leads the fetch of `url`, refused at the gate (its share is taken)
    await sleep(200);
    const answered = await http(url, other);
    const otherMs = Date.now() - started;
    expect(answered.status).toBe(200);
    // Behind the refused leader it would have waited DELAY_MS first.
    expect(otherMs).toBeLessThan(DELAY_MS / 2);
    const refusal = await refused;
    expect(refusal.status).toBe(429);
    // The refused client still waits the delay (one answer per delay to a client that retries at once).
    expect(Date.now() - started).toBeGreaterThanOrEqual(DELAY_MS - 50);
    for (const res of held) res.end();
    await stalled.catch(() => undefined);
  });
});
