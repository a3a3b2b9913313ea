// Every answer the gateway can give, on the public and the admin listener, says `X-Cache` (what
// the cache did, docs/REQUESTS.md's table) and carries an `X-Request-Id`: cached, fetched, passed and
// streamed answers, PURGE accepted or refused, the gateway's own errors (414, 400, 405, 429,
// 502), those Node's parser gives before any handler (400, 431), and the admin routes.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, rawTarget, type TestResponse } from '../support/http.js';

const REQUEST_ID = /^[0-9a-f]{12}-[0-9a-z]+$/;
const api = '/w/api.php?action=query&meta=siteinfo&format=json';

/** Bytes on a connection of their own, the answer read to the end: status and headers. */
function rawBytes(base: string, bytes: string): Promise<{ status: number; headers: Record<string, string> }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes, 'latin1'));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const [statusLine, ...lines] = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine?.split(' ')[1]), headers });
    });
  });
}

describe('X-Cache and X-Request-Id on every answer', () => {
  let wiki: FakeUpstream;
  let gw: RunningGateway;
  let untrusting: RunningGateway;
  let limited: RunningGateway;
  let wikiless: RunningGateway;
  let clock = Date.now();
  const slow: { release?: () => void } = {};

  beforeAll(async () => {
    wiki = await startFakeUpstream((req, res) => {
      const url = req.url ?? '/';
      const send = () => {
        if (url.includes('list=filearchive') || req.method === 'POST') {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        } else if (url.startsWith('/w/api.php')) {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public', vary: 'Accept-Encoding, Cookie' });
        } else {
          res.writeHead(200, { 'content-type': 'text/html' });
        }
        res.end(url.startsWith('/w/api.php') ? '{"batchcomplete":true}' : '<html></html>');
      };
      // The first of two identical requests waits until the second has arrived at the gateway.
      if (url.includes('coalesce=1')) slow.release = send;
      else send();
    });
    gw = await startGateway(wiki.url, { WIKIEDGE_GRACE_SECONDS: '0' }, { now: () => clock });
    untrusting = await startGateway(wiki.url, { WIKIEDGE_PURGE_ALLOW: '192.0.2.10' });
    // Refused at once: a delayed refusal lets the bucket refill before the next request.
    limited = await startGateway(wiki.url, {
      WIKIEDGE_CLIENT_MISS_RATE: '1',
      WIKIEDGE_CLIENT_MISS_BURST: '1',
      WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
    });
    wikiless = await startGateway(`http://127.0.0.1:${await closedPort()}`);
  });
  afterAll(async () => {
    for (const g of [gw, untrusting, limited, wikiless]) await g?.close();
    await wiki?.close();
  });

  function expectMarked(res: { status: number; headers: Record<string, string | string[] | undefined> }, status: number, cache: string): void {
    expect(res.status).toBe(status);
    expect(res.headers['x-cache']).toBe(cache);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  }

  describe('the public listener', () => {
    it('miss, then hit, and a HEAD hit', async () => {
      expectMarked(await http(`${gw.url}${api}&t=cached`), 200, 'miss');
      expectMarked(await http(`${gw.url}${api}&t=cached`), 200, 'hit');
      expectMarked(await http(`${gw.url}${api}&t=cached`, { method: 'HEAD' }), 200, 'hit');
    });

    it('stale: past the TTL, the wiki failing (stale-if-error)', async () => {
      const failing = { now: false };
      const flaky = await startFakeUpstream((_req, res) => {
        if (failing.now) {
          res.writeHead(503, { 'content-type': 'text/plain' });
          return void res.end('down');
        }
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
        res.end('{"batchcomplete":true}');
      });
      const g = await startGateway(flaky.url, { WIKIEDGE_GRACE_SECONDS: '0' }, { now: () => clock });
      try {
        expectMarked(await http(`${g.url}${api}&t=stale`), 200, 'miss');
        failing.now = true;
        clock += 120_000; // past the 60 s TTL, inside stale-if-error (300 s)
        expectMarked(await http(`${g.url}${api}&t=stale`), 200, 'stale');
      } finally {
        await g.close();
        await flaky.close();
      }
    });

    it('coalesced: an identical request waiting for one already on its way', async () => {
      const first = http(`${gw.url}${api}&coalesce=1`);
      while (!slow.release) await new Promise((r) => setTimeout(r, 10));
      const waitersBefore = coalescedWaiters(await http(`${gw.adminUrl}/metrics`));
      const second = http(`${gw.url}${api}&coalesce=1`);
      // Until the second has joined the first (counted as it joins).
      while (coalescedWaiters(await http(`${gw.adminUrl}/metrics`)) === waitersBefore) await new Promise((r) => setTimeout(r, 10));
      slow.release();
      const answers = await Promise.all([first, second]);
      expect(answers.map((a) => a.headers['x-cache']).sort()).toEqual(['coalesced', 'miss']);
      for (const a of answers) expect(a.headers['x-request-id']).toMatch(REQUEST_ID);
    });

    it('pass: a POST, an answer the wiki made private, a page streamed through', async () => {
      expectMarked(
        await http(`${gw.url}/w/api.php`, {
          method: 'POST',
          body: 'action=query&format=json',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
        200,
        'pass',
      );
      expectMarked(await http(`${gw.url}/w/api.php?action=query&list=filearchive&format=json`), 200, 'pass');
      expectMarked(await http(`${gw.url}/w/index.php?title=Main_Page`), 200, 'pass');
    });

    it('bypass: a session holder’s no-cache', async () => {
      const res = await http(`${gw.url}${api}&t=bypass`, { headers: { cookie: 'wiki_session=abcdef0123456789', 'cache-control': 'no-cache' } });
      expectMarked(res, 200, 'bypass');
    });

    it('purge: an accepted PURGE, of an api.php URL and of a page', async () => {
      expectMarked(await http(`${gw.url}${api}&t=cached`, { method: 'PURGE' }), 200, 'purge');
      expectMarked(await http(`${gw.url}/wiki/Main_Page`, { method: 'PURGE' }), 200, 'purge');
    });

    it('error: a refused PURGE (405, the gateway refuses: not a purge)', async () => {
      const res = await http(`${untrusting.url}${api}`, { method: 'PURGE' });
      expectMarked(res, 405, 'error');
      // The methods the gateway forwards, as for any method it does not (below).
      expect(res.headers['allow']).toBe('GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH');
    });

    it('error: a target over WIKIEDGE_MAX_URL_BYTES (414), malformed (400), with a fragment (400)', async () => {
      expectMarked(await http(`${gw.url}${api}&pad=${'x'.repeat(9_000)}`), 414, 'error');
      expectMarked(await rawTarget(gw.url, '/w/api.php/%zz'), 400, 'error');
      expectMarked(await rawTarget(gw.url, '/w/api.php?action=query#frag'), 400, 'error');
    });

    it('error: a method the gateway does not forward (405 with Allow)', async () => {
      for (const method of ['PROPFIND', 'TRACE']) {
        const res = await rawTarget(gw.url, '/w/index.php', { method });
        expectMarked(res, 405, 'error');
        expect(res.headers['allow']).toBe('GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH');
      }
    });

    it('error: a client over its budget of uncached requests (429)', async () => {
      // In parallel: a client asking in series is never refused (limits/client-budget.ts).
      const answers: TestResponse[] = await Promise.all(Array.from({ length: 6 }, (_, i) => http(`${limited.url}${api}&t=limit-${i}`)));
      const refused = answers.filter((a) => a.status === 429);
      expect(refused.length).toBeGreaterThan(0);
      for (const answer of refused) expectMarked(answer, 429, 'error');
    });

    it('error: the wiki unreachable, on api.php and on a page (502)', async () => {
      expectMarked(await http(`${wikiless.url}${api}`), 502, 'error');
      expectMarked(await http(`${wikiless.url}/w/index.php?title=Main_Page`), 502, 'error');
    });

    it('error: what Node’s parser refuses before any handler (400, 431)', async () => {
      expectMarked(await rawBytes(gw.url, 'GARBAGE\r\n\r\n'), 400, 'error');
      expectMarked(await rawBytes(gw.url, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`), 431, 'error');
    });
  });

  describe('the admin listener', () => {
    it('pass: /healthz, /readyz, /metrics, and /upstreamz (503 before the first probe: an answer, not an error)', async () => {
      expectMarked(await http(`${gw.adminUrl}/healthz`), 200, 'pass');
      expectMarked(await http(`${gw.adminUrl}/readyz`), 200, 'pass');
      expectMarked(await http(`${gw.adminUrl}/metrics`), 200, 'pass');
      expectMarked(await http(`${gw.adminUrl}/upstreamz`), 503, 'pass');
    });

    it('purge: POST /purge', async () => {
      expectMarked(await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { 'content-type': 'application/json' } }), 200, 'purge');
    });

    it('error: a purge refused (415) or malformed (400), a route that does not exist (404), what Node refuses (400)', async () => {
      expectMarked(await http(`${gw.adminUrl}/purge?all=1`, { method: 'POST' }), 415, 'error');
      expectMarked(await http(`${gw.adminUrl}/purge`, { method: 'POST', headers: { 'content-type': 'application/json' } }), 400, 'error');
      expectMarked(await http(`${gw.adminUrl}/nothing-here`), 404, 'error');
      expectMarked(await rawBytes(gw.adminUrl, 'GARBAGE\r\n\r\n'), 400, 'error');
    });

    it('keeps a request id the client sent', async () => {
      const res = await http(`${gw.adminUrl}/healthz`, { headers: { 'x-request-id': 'probe-42' } });
      expect(header(res, 'x-request-id')).toBe('probe-42');
    });
  });
});

function coalescedWaiters(metrics: TestResponse): number {
  return Number(/^wikiedge_coalesced_waiters_total (\d+)/m.exec(metrics.body)?.[1] ?? 0);
}
