// Whole answers are written to node:http by the gateway itself (steps/deliver.ts writeWhole), not
// through Fastify's reply.send: what Fastify added to a Buffer it sent is still added, and what
// the deliver step changes for a requester still changes, on a miss, a hit from the full path
// and a HEAD alike.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

const BODY = JSON.stringify({ batchcomplete: true, query: { general: { sitename: 'Lab' } } });

/** Public, with an Expires; no Content-Type when asked; two cookies of its own for a session's request. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  const untyped = (req.url ?? '').includes('untyped');
  res.writeHead(200, {
    ...(!untyped && { 'content-type': 'application/json; charset=utf-8' }),
    'cache-control': 's-maxage=300, max-age=300, public',
    expires: 'Thu, 01 Jan 2099 00:00:00 GMT',
    // A cache between the gateway and the wiki says its own.
    ...((req.url ?? '').includes('behind') && { age: '100', 'x-cache': 'cp1 hit', 'x-request-id': 'theirs' }),
    ...(req.headers.cookie !== undefined && { 'set-cookie': ['wikiA=1; path=/', 'wikiB=2; path=/'] }),
  });
  res.end(BODY);
}

describe('an answer written whole', () => {
  const pair = gatewayOnFake(answer);

  it('without a Content-Type: application/octet-stream, as Fastify gave a Buffer, on the miss and the hit', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=untyped-${randomUUID()}`;
    const miss = await http(url);
    expect(header(miss, 'x-cache')).toBe('miss');
    expect(header(miss, 'content-type')).toBe('application/octet-stream');
    expect(header(miss, 'content-length')).toBe(String(Buffer.byteLength(BODY)));
    expect(miss.body).toBe(BODY);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const hit = await http(url, { method: 'HEAD' });
    expect(header(hit, 'x-cache')).toBe('hit');
    expect(header(hit, 'content-type')).toBe('application/octet-stream');
    expect(header(hit, 'content-length')).toBe(String(Buffer.byteLength(BODY)));
    expect(header(hit, 'age')).toMatch(/^\d+$/);
  });

  it('a logged-in requester: never told it is public, Expires dropped, the cookies it may see in order', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    const res = await http(url, { headers: { cookie: `wiki_session=${'d'.repeat(32)}` } });
    expect(header(res, 'cache-control')).toMatch(/^private/);
    expect(header(res, 'expires')).toBeUndefined();
    expect(res.headers['set-cookie']).toEqual(['wikiA=1; path=/', 'wikiB=2; path=/']);
    expect(header(res, 'x-request-id')).toBeTruthy();
    expect(res.body).toBe(BODY);
  });

  it('an anonymous requester: the wiki’s Cache-Control and Expires as they came', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    const res = await http(url);
    expect(header(res, 'x-cache')).toBe('miss');
    expect(header(res, 'expires')).toBe('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(header(res, 'content-type')).toBe('application/json; charset=utf-8');
  });

  it('behind another cache: one Age, X-Cache and X-Request-Id each, ours, on the miss, a full-path hit and a fresh hit', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=behind-${randomUUID()}`;
    // undici gives a header sent twice as an array.
    const count = (res: Awaited<ReturnType<typeof http>>, name: string) => {
      const v = res.headers[name];
      return v === undefined ? 0 : Array.isArray(v) ? v.length : 1;
    };
    const miss = await http(url);
    expect(header(miss, 'x-cache')).toBe('miss');
    expect(count(miss, 'x-cache')).toBe(1);
    expect(count(miss, 'x-request-id')).toBe(1);
    // A fresh answer keeps the Age of the cache it came through.
    expect(header(miss, 'age')).toBe('100');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    // A HEAD takes the full path's hit, a GET the fresh-hit path's.
    for (const method of ['HEAD', 'GET']) {
      const hit = await http(url, { method });
      expect(header(hit, 'x-cache'), method).toBe('hit');
      for (const name of ['age', 'x-cache', 'x-request-id']) expect(count(hit, name), `${method} ${name}`).toBe(1);
      expect(header(hit, 'age'), method).not.toBe('100');
    }
  });
});
