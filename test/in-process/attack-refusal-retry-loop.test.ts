// Security round 2, class 19 (slow and flooding clients), the client that ignores Retry-After: it
// asks again the moment it is refused. Answered at once, its refusals cost the gateway a whole
// request each, as fast as it can ask (bench: 64 connections took ~6,000 refusals/s and pushed
// every other client's hits from 0.13 to 12 ms). Each refusal now waits
// WIKIEDGE_CLIENT_REFUSAL_DELAY_MS, so such a client gets one answer per connection per delay.
// And a spent client whose request has a stale entry gets that entry, not a refusal.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startHoldingUpstream } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

const DELAY_MS = 400;

describe('a client that asks again the moment it is refused', () => {
  const t = gatewayOnFake(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    },
    { WIKIEDGE_CLIENT_MISS_RATE: '1', WIKIEDGE_CLIENT_MISS_BURST: '2', WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: String(DELAY_MS) },
  );

  it('gets one refusal per connection per delay, each with Retry-After; its hits are answered all along', async () => {
    // Not siteinfo: its general.time keeps it for 2 s only (WIKIEDGE_TTL_CLOCK_SECONDS).
    const cached = `${t.gw.apiUrl}?action=query&list=allpages&format=json&requestid=${randomUUID()}`;
    expect((await http(cached)).status).toBe(200);
    const connections = 8;
    const refusals: string[] = [];
    let answered = 0;
    const started = Date.now();
    const runFor = 2_000;
    const loops = Array.from({ length: connections }, async () => {
      while (Date.now() - started < runFor) {
        const res = await http(`${t.gw.apiUrl}?action=query&list=allpages&format=json&bust=${randomUUID()}`);
        answered++;
        if (res.status === 429) refusals.push(header(res, 'retry-after') ?? '');
      }
    });
    // Hits in the middle of it: never limited.
    const hits: string[] = [];
    while (Date.now() - started < runFor) hits.push(header(await http(cached), 'x-cache') ?? '');
    await Promise.all(loops);
    const elapsed = Date.now() - started;
    // However slow this machine: no connection can have more refusals than delays fitted in the
    // time it ran (+1 for the one under way when it stopped looking); answered at once it
    // would be thousands.
    const mostPossible = connections * (Math.ceil(elapsed / DELAY_MS) + 1);
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals.length).toBeLessThanOrEqual(mostPossible);
    // Served: the burst, what the rate refilled, and a request that found none of the client's
    // others under way (a client in series is never refused; its refused requests count while
    // they wait their delay, so that is at most one each time a round of delays ends together).
    expect(answered - refusals.length).toBeLessThanOrEqual(2 + Math.ceil(elapsed / 1000) + 1 + Math.ceil(elapsed / DELAY_MS) + 1);
    for (const retryAfter of refusals) expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(hits.length).toBeGreaterThan(0);
    expect(new Set(hits)).toEqual(new Set(['hit']));
  });
});

describe('a spent client whose request has an entry past its grace', () => {
  it('gets the stale entry (stale-if-error), not a refusal, and at once', async () => {
    let clock = 1_000_000;
    const fake = await startHoldingUpstream(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
        res.end('{"batchcomplete":true}');
      },
      (req) => req.url?.includes('hold=1') === true,
    );
    const held = fake.held;
    const gw = await startGateway(
      fake.url,
      {
        WIKIEDGE_CLIENT_MISS_RATE: '1',
        WIKIEDGE_CLIENT_MISS_BURST: '1',
        WIKIEDGE_TTL_PUBLIC_SECONDS: '10',
        WIKIEDGE_GRACE_SECONDS: '5',
        WIKIEDGE_STALE_IF_ERROR_SECONDS: '300',
        // A minute: were the answer held for it, the test would time out.
        WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '60000',
      },
      { now: () => clock },
    );
    try {
      // siprop=namespaces: siteinfo`s default (general) carries the wiki`s clock, never served stale to a spent client.
      const url = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${randomUUID()}`;
      expect(header(await http(url), 'x-cache')).toBe('miss');
      // Past TTL (the wiki's s-maxage, 60 s) and grace (5 s), within stale-if-error; the bucket
      // refilled (1 token) and spent again.
      clock += 70_000;
      expect((await http(`${gw.apiUrl}?action=query&format=json&bust=${randomUUID()}`)).status).toBe(200);
      // Another of its uncached requests under way: the client asks in parallel (a client in
      // series is never refused).
      const other = http(`${gw.apiUrl}?action=query&format=json&hold=1&bust=${randomUUID()}`);
      await vi.waitFor(() => expect(held).toHaveLength(1));
      const fetchedBefore = fake.requests.length;
      const answer = await http(url);
      expect(answer.status).toBe(200);
      expect(header(answer, 'x-cache')).toBe('stale');
      expect(fake.requests.length).toBe(fetchedBefore);
      held[0]!();
      expect((await other).status).toBe(200);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
