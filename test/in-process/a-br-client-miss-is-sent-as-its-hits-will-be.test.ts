// A client that prefers br but takes identity (Accept-Encoding: br, most tools' default beside
// gzip) gets, on a miss stored after its answer (steps/flow.ts: the stored gzip is made only
// for a client that takes it), what its hits will get: identity. Brotli made for every such miss
// would cost a compression per miss that no hit pays (deliver.ts representationOf).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

const BODY = JSON.stringify({ batchcomplete: true, query: { pages: Array.from({ length: 40 }, (_, i) => ({ title: `Page ${i}`, pageid: i })) } });

function publicAnswer(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
  res.end(BODY);
}

describe('a br client’s miss', () => {
  const pair = gatewayOnFake(publicAnswer);

  it.each(['br', 'br, deflate'])('Accept-Encoding: %s: the miss and the hit are both identity, with Vary: Accept-Encoding', async (accept) => {
    const url = `${pair.gw.apiUrl}?action=query&list=allpages&format=json&requestid=${randomUUID()}`;
    const miss = await http(url, { headers: { 'accept-encoding': accept } });
    expect(header(miss, 'x-cache')).toBe('miss');
    expect(header(miss, 'content-encoding')).toBeUndefined();
    expect(miss.body).toBe(BODY);
    expect(header(miss, 'vary')).toMatch(/Accept-Encoding/);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const hit = await http(url, { headers: { 'accept-encoding': accept } });
    expect(header(hit, 'x-cache')).toBe('hit');
    expect(header(hit, 'content-encoding')).toBeUndefined();
  });

  it('a client that refuses identity still gets its first choice', async () => {
    const url = `${pair.gw.apiUrl}?action=query&list=allpages&format=json&requestid=${randomUUID()}`;
    const miss = await http(url, { headers: { 'accept-encoding': 'br, identity;q=0' } });
    expect(header(miss, 'x-cache')).toBe('miss');
    expect(header(miss, 'content-encoding')).toBe('br');
  });
});
