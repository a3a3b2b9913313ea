// Attack class 11 (cache exhaustion), the parse memo: a flood of unique api.php URLs must not
// grow the gateway's memory of parsed requests without bound (src/steps/flow.ts, RECV_MEMO_MAX),
// and a URL pushed out of it is still served right.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recvMemoSize } from '../../src/steps/recv.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

let upstream: FakeUpstream;
let gw: RunningGateway;

beforeAll(async () => {
  upstream = await startFakeUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=60, max-age=60, public' });
    res.end(JSON.stringify({ echo: req.url }));
  });
  gw = await startGateway(upstream.url, MANY_CLIENTS_FROM_LOOPBACK);
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

describe('recv memo flood', () => {
  it('2,500 unique URLs leave at most 2,000 parsed requests remembered, and the first one is still answered correctly', async () => {
    const url = (i: number) => `${gw.apiUrl}?action=query&list=allpages&apfrom=flood${i}&format=json`;
    for (let i = 0; i < 2_500; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const res = await http(url(i + j));
          expect(res.status).toBe(200);
        }),
      );
    }
    const size = recvMemoSize(gw.built.gateway);
    expect(size).toBeGreaterThan(1_000); // the memo is in use
    expect(size).toBeLessThanOrEqual(2_000);
    // The first URL was pushed out of the memo long ago: parsed again, its cached answer served.
    const first = await http(url(0));
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body).echo).toContain('apfrom=flood0&');
    expect(first.headers['x-cache']).toBe('hit');
  });

  it('GET and HEAD of 1,500 unique URLs (3,000 parsed requests) still leave at most 2,000 remembered', async () => {
    const url = (i: number) => `${gw.apiUrl}?action=query&list=allpages&apfrom=both${i}&format=json`;
    for (let i = 0; i < 1_500; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          expect((await http(url(i + j))).status).toBe(200);
          expect((await http(url(i + j), { method: 'HEAD' })).status).toBe(200);
        }),
      );
    }
    const size = recvMemoSize(gw.built.gateway);
    expect(size).toBeGreaterThan(1_000);
    expect(size).toBeLessThanOrEqual(2_000);
  });
});
