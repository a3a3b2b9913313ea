// A HEAD the gateway passes says the headers its GET would (RFC 9110 §9.3.2), and never a
// Content-Length other than the GET's body (RFC 9110 §8.6: a server MUST NOT send one that
// differs). The wiki sends no length for a HEAD (../shared captures: 20-anon-head-siteinfo), and
// the GET's length is the gateway's (debuginfo stripped, compressed for the client): a passed HEAD
// is asked of the wiki as a GET, as a cached one is (steps/flow.ts), and its body dropped.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

// Large enough to be compressed for a client that takes gzip (deliver.ts compressible).
const BODY = JSON.stringify({ batchcomplete: true, query: { random: [{ id: 1, ns: 0, title: 'x'.repeat(4000) }] } });
const methods: string[] = [];

/** As PHP answers: a HEAD gets the GET's headers, no length, no body. */
function answer(req: IncomingMessage, res: ServerResponse): void {
  methods.push(req.method ?? '');
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
  res.end(req.method === 'HEAD' ? undefined : BODY);
}

const COMPARED = ['content-length', 'content-encoding', 'vary', 'content-type', 'cache-control'];

describe.each([
  ['debuginfo stripped (read whole)', {} as Record<string, string>],
  ['debuginfo off (streamed)', { WIKIEDGE_DEBUGINFO: 'off' } as Record<string, string>],
])('a passed HEAD, %s', (_, env) => {
  const pair = gatewayOnFake(answer, env);

  for (const [what, query, headers] of [
    ['identity', 'action=query&list=random&format=json', {}],
    ['gzip', 'action=query&list=random&format=json', { 'accept-encoding': 'gzip' }],
    ['an array-shaped parameter', 'action=query&list=random&format=json&x[]=1', { 'accept-encoding': 'gzip' }],
  ] as const) {
    it(`says the GET's headers (${what})`, async () => {
      const url = `${pair.gw.apiUrl}?${query}&requestid=${randomUUID()}`;
      const get = await http(url, { headers });
      const head = await http(url, { method: 'HEAD', headers });
      expect(header(head, 'x-cache')).toBe('pass');
      expect(header(get, 'x-cache')).toBe('pass');
      expect(head.body).toBe('');
      for (const name of COMPARED) expect.soft(header(head, name), name).toBe(header(get, name));
      // Streamed, the GET goes chunked: the HEAD then says no length either.
      if (env.WIKIEDGE_DEBUGINFO === undefined) expect(Number(header(head, 'content-length'))).toBeGreaterThan(0);
      expect(methods.at(-1)).toBe('GET');
    });
  }
});
