// upstream.ts fetchWhole: the answer of a miss read whole through undici's dispatch, without a
// body stream. What askWiki relies on: the body whole however it was chunked, the final answer
// after 1xx ones, the request aborted once the body says or grows past the limit, and undici's
// own errors when the wiki fails (words/errors.ts maps them as it maps request()'s).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnswerTooLargeError, Upstream } from '../../src/upstream/upstream.js';
import { fromUpstreamFailure } from '../../src/words/errors.js';

const CHUNK = 'x'.repeat(1000);

function wiki(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  if (url.includes('chunked')) {
    // Ten writes, no Content-Length: the body arrives in several pieces.
    res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
    let n = 0;
    const next = () => (++n < 10 ? res.write(CHUNK, () => setTimeout(next, 1)) : res.end(CHUNK));
    next();
  } else if (url.includes('early-hints')) {
    res.writeEarlyHints({ link: '</style.css>; rel=preload' });
    res.writeHead(201, { 'content-type': 'text/plain' });
    res.end('final');
  } else if (url.includes('hang-up')) {
    res.writeHead(200, { 'content-length': '100' });
    res.write('partial');
    setTimeout(() => res.socket?.destroy(), 10);
  } else {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(CHUNK.length) });
    res.end(CHUNK);
  }
}

describe('an answer read whole (upstream.ts fetchWhole)', () => {
  let server: Server;
  let upstream: Upstream;
  beforeAll(async () => {
    server = createServer(wiki);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    upstream = new Upstream({ origin: new URL(`http://127.0.0.1:${port}`), connectTimeoutMs: 2_000, responseTimeoutMs: 5_000, connections: 4 });
  });
  afterAll(async () => {
    await upstream.close();
    await new Promise((resolve) => server.close(resolve));
  });

  const ask = (path: string, limit = 1 << 20) => upstream.fetchWhole({ method: 'GET', path, headers: {} }, limit);

  it('gives the status, the headers as request() parses them and the body whole, in one piece or many', async () => {
    const one = await ask('/w/api.php?one');
    expect(one.statusCode).toBe(200);
    expect(one.headers['content-type']).toBe('application/json');
    expect(one.body.toString()).toBe(CHUNK);
    const many = await ask('/w/api.php?chunked');
    expect(many.body.toString()).toBe(CHUNK.repeat(10));
    expect(many.headers['set-cookie']).toEqual(['a=1', 'b=2']);
  });

  it('answers with the final answer after a 1xx one', async () => {
    const answer = await ask('/w/api.php?early-hints');
    expect(answer.statusCode).toBe(201);
    expect(answer.body.toString()).toBe('final');
  });

  it('refuses a body past the limit, whether its Content-Length says so or it grows past it', async () => {
    await expect(ask('/w/api.php?one', 999)).rejects.toBeInstanceOf(AnswerTooLargeError);
    await expect(ask('/w/api.php?chunked', 5_000)).rejects.toBeInstanceOf(AnswerTooLargeError);
    // The connection is usable again afterwards.
    expect((await ask('/w/api.php?one')).body.length).toBe(CHUNK.length);
  });

  it('fails with undici’s errors, mapped as request()’s are', async () => {
    const cut = await ask('/w/api.php?hang-up').catch((err: unknown) => err);
    expect(cut).toBeInstanceOf(Error);
    const streamed = await upstream
      .request({ method: 'GET', path: '/w/api.php?hang-up', headers: {} })
      .then((res) => res.body.arrayBuffer())
      .catch((err: unknown) => err);
    expect(fromUpstreamFailure(cut).code).toBe('wikiedge-upstream-reset');
    expect(fromUpstreamFailure(streamed).code).toBe('wikiedge-upstream-reset');
    const nobody = new Upstream({ origin: new URL('http://127.0.0.1:1'), connectTimeoutMs: 2_000, responseTimeoutMs: 2_000, connections: 1 });
    const refused = await nobody.fetchWhole({ method: 'GET', path: '/', headers: {} }, 100).catch((err: unknown) => err);
    await nobody.close();
    expect(fromUpstreamFailure(refused).code).toBe('wikiedge-upstream-unreachable');
  });
});
