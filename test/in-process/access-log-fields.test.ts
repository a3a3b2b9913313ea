// Every request gets an access-log line with what varnishncsa and nginx's `combined` format give:
// client address (X-Forwarded-For believed only from WIKIEDGE_TRUSTED_PROXIES), method, URL
// (credential values redacted), status, bytes received and sent (exactly what crossed the
// connection), user agent, duration; and the gateway's own: cache disposition, module, request
// id. The fresh-hit path writes the same fields as the full path. Purges get a line saying what
// they removed and who asked, and are counted by source.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

/** One request on a connection of its own: the bytes sent, and every byte that came back. */
async function rawRequest(url: string, head: string, body = ''): Promise<{ sent: number; received: number; text: string }> {
  const { hostname, port } = new URL(url);
  const request = `${head}\r\nConnection: close\r\n\r\n${body}`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: hostname, port: Number(port) }, () => socket.write(request, 'latin1'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      resolve({ sent: Buffer.byteLength(request, 'latin1'), received: all.length, text: all.toString('latin1') });
    });
  });
}

const lineOf = (gw: RunningGateway, reqId: string) => gw.logs.find((l) => l['reqId'] === reqId && l['msg'] === 'request');

async function waitForLine(gw: RunningGateway, reqId: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 100; i++) {
    const line = lineOf(gw, reqId);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no request line for ${reqId}`);
}

async function metric(gw: RunningGateway, series: string): Promise<number> {
  const body = (await http(`${gw.adminUrl}/metrics`)).body;
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.split(' ').pop());
}

function publicWiki(): Promise<FakeUpstream> {
  return startFakeUpstream((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true,"query":{"general":{"sitename":"Test"}}}');
    });
  });
}

const QUERY = '/w/api.php?action=query&meta=siteinfo&format=json';

describe('access log fields, behind a trusted proxy (the default: loopback)', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await publicWiki();
    gw = await startGateway(fake.url, { WIKIEDGE_LOG_HITS: 'true' });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('a miss: the client from X-Forwarded-For, the user agent, the bytes each way', async () => {
    const host = new URL(gw.url).host;
    const r = await rawRequest(
      gw.url,
      `GET ${QUERY} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: mwn/2.0 (https://example.org/bot)\r\nX-Forwarded-For: 198.51.100.1, 203.0.113.9\r\nX-Request-Id: miss-1`,
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(await waitForLine(gw, 'miss-1')).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'wikiedge',
      reqId: 'miss-1',
      method: 'GET',
      path: '/w/api.php',
      url: QUERY,
      module: 'query+siteinfo',
      cache: 'miss',
      status: 200,
      ms: expect.any(Number),
      // The rightmost address that is not a trusted proxy, as MediaWiki's WebRequest::getIP().
      client: '203.0.113.9',
      ua: 'mwn/2.0 (https://example.org/bot)',
      bytesIn: r.sent,
      bytesOut: r.received,
      host,
      protocol: 'HTTP/1.1',
      timeIso: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      upstreamMs: expect.any(Number),
      msg: 'request',
    });
  });

  it('a hit on the fresh-hit path: the same fields, and the bytes served counted by disposition', async () => {
    const before = await metric(gw, 'wikiedge_response_bytes_total{disposition="hit"}');
    const host = new URL(gw.url).host;
    const r = await rawRequest(gw.url, `GET ${QUERY} HTTP/1.1\r\nHost: ${host}\r\nX-Request-Id: hit-1`);
    expect(r.text).toMatch(/\r\nx-cache: hit\r\n/i);
    const line = await waitForLine(gw, 'hit-1');
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'wikiedge',
      reqId: 'hit-1',
      method: 'GET',
      path: '/w/api.php',
      url: QUERY,
      module: 'query+siteinfo',
      cache: 'hit',
      status: 200,
      ms: expect.any(Number),
      client: '127.0.0.1',
      bytesIn: r.sent,
      bytesOut: r.received,
      host,
      protocol: 'HTTP/1.1',
      timeIso: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      msg: 'request',
    });
    expect((await metric(gw, 'wikiedge_response_bytes_total{disposition="hit"}')) - before).toBe(r.received);
  });

  it('a POST: the URL with its token redacted, the module its form names', async () => {
    const host = new URL(gw.url).host;
    const body = 'action=logout&format=json&token=0123abcd%2B%5C';
    const r = await rawRequest(
      gw.url,
      `POST /w/api.php?format=json&token=SECRET-IN-QUERY HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\nX-Request-Id: post-1`,
      body,
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 200 /);
    const line = await waitForLine(gw, 'post-1');
    expect(line).toMatchObject({
      method: 'POST',
      url: '/w/api.php?format=json&token=[redacted]',
      module: 'logout',
      cache: 'pass',
      bytesIn: r.sent,
      bytesOut: r.received,
    });
    expect(JSON.stringify(gw.logs)).not.toContain('SECRET-IN-QUERY');
  });

  it('a PURGE of an api.php URL and of a page URL: a purge line each, counted by source', async () => {
    const purges = (source: string) => metric(gw, `wikiedge_purge_requests_total{source="${source}"}`);
    const [api0, page0] = [await purges('http-purge'), await purges('page-url')];
    expect((await http(`${gw.url}${QUERY}`, { method: 'PURGE', headers: { 'x-request-id': 'purge-1' } })).status).toBe(200);
    expect((await http(`${gw.url}/wiki/Main_Page`, { method: 'PURGE', headers: { 'x-request-id': 'purge-2' } })).status).toBe(200);
    expect(gw.logs.find((l) => l['reqId'] === 'purge-1' && l['msg'] === 'purge')).toMatchObject({
      source: 'http-purge',
      kind: 'url',
      what: '/w/api.php?action=query&format=json&meta=siteinfo',
      purged: 1,
    });
    expect(gw.logs.find((l) => l['reqId'] === 'purge-2' && l['msg'] === 'purge')).toMatchObject({ source: 'page-url', kind: 'page', what: 'Main Page' });
    // And each is a request like any other.
    expect(await waitForLine(gw, 'purge-1')).toMatchObject({ method: 'PURGE', cache: 'purge', status: 200 });
    expect((await purges('http-purge')) - api0).toBe(1);
    expect((await purges('page-url')) - page0).toBe(1);
  });

  it('an admin purge: a purge line with its source, counted once', async () => {
    const before = await metric(gw, 'wikiedge_purge_requests_total{source="admin"}');
    const res = await http(`${gw.adminUrl}/purge?module=query%2Bsiteinfo`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(gw.logs.filter((l) => l['msg'] === 'purge' && l['source'] === 'admin').at(-1)).toMatchObject({
      kind: 'module',
      what: 'siteinfo',
      purged: expect.any(Number),
    });
    expect((await metric(gw, 'wikiedge_purge_requests_total{source="admin"}')) - before).toBe(1);
  });
});

describe('access log fields, behind a proxy that is not trusted', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await publicWiki();
    gw = await startGateway(fake.url, { WIKIEDGE_LOG_HITS: 'true', WIKIEDGE_TRUSTED_PROXIES: '192.0.2.1' });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('logs the peer: its X-Forwarded-For is not believed, on either path', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.9' };
    // Nor its X-Request-Id: the lines carry ids of the gateway's own (the answers say which).
    const miss = await http(`${gw.url}${QUERY}`, { headers: { ...headers, 'x-request-id': 'untrusted-1' } });
    const hit = await http(`${gw.url}${QUERY}`, { headers: { ...headers, 'x-request-id': 'untrusted-2' } });
    for (const res of [miss, hit]) expect(header(res, 'x-request-id')).not.toMatch(/^untrusted/);
    expect(await waitForLine(gw, header(miss, 'x-request-id')!)).toMatchObject({ cache: 'miss', client: '127.0.0.1' });
    expect(await waitForLine(gw, header(hit, 'x-request-id')!)).toMatchObject({ cache: 'hit', client: '127.0.0.1' });
  });
});
