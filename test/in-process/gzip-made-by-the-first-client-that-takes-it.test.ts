// A miss is stored as it is unless its client takes gzip; the gzip is made once, by the first
// hit whose client takes it, and put in the entry's place (steps/flow.ts fetchAndStore,
// compression/representations.ts gzipFirst). A miss nobody asks for again is never compressed;
// every client gets what it takes, on the full path and the fresh-hit path alike.
import { randomBytes, randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';
import { metric, until } from '../support/replicas.js';
import type { RunningGateway } from '../support/gateway.js';
import { request } from 'undici';

const BODY = JSON.stringify({ batchcomplete: true, query: { pages: Array.from({ length: 40 }, (_, i) => ({ title: `Page ${i}`, pageid: i })) } });
/** An answer gzip cannot shrink by a tenth (random bytes): stored as it is for good. */
const NOISE = randomBytes(1500);

/** Above what is compressed on the request's thread (codings.ts SYNC_MAX_BYTES, 64 KiB): made on the thread pool. */
const LARGE = JSON.stringify({ query: { pages: Array.from({ length: 4000 }, (_, i) => ({ title: `Page ${i}`, pageid: i, ns: 0 })) } });

function publicAnswer(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '';
  // `short`: fresh for a second, then in its grace window (a background refresh).
  const maxAge = url.includes('short') ? 1 : 300;
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': `s-maxage=${maxAge}, max-age=${maxAge}, public` });
  res.end(url.includes('noise') ? NOISE : url.includes('large') ? LARGE : BODY);
}

/** A GET whose body is kept as bytes (a gzip body is not text). */
async function bytes(target: string, headers: Record<string, string>) {
  const res = await request(target, { headers });
  return { headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

function said(res: { headers: Record<string, string | string[] | undefined> }, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Bytes gzip-compressed at store so far. */
function storeGzipInput(gw: RunningGateway): Promise<number> {
  return metric(gw, /^wikiedge_compression_input_bytes_total\{coding="gzip",stage="store"\} (\d+)/m);
}

describe('the gzip of an entry is made by the first client that takes it', () => {
  const pair = gatewayOnFake(publicAnswer);
  const url = (what = 'allpages') => `${pair.gw.apiUrl}?action=query&list=${what}&format=json&requestid=${randomUUID()}`;

  it('a miss without Accept-Encoding is stored as it is: nothing compressed, its hits identity', async () => {
    const before = await storeGzipInput(pair.gw);
    const u = url();
    const miss = await http(u);
    expect(header(miss, 'x-cache')).toBe('miss');
    expect(header(miss, 'content-encoding')).toBeUndefined();
    expect(header(miss, 'vary')).toMatch(/Accept-Encoding/);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    for (let i = 0; i < 3; i++) {
      const hit = await http(u);
      expect(header(hit, 'x-cache')).toBe('hit');
      expect(header(hit, 'content-encoding')).toBeUndefined();
      expect(header(hit, 'vary')).toMatch(/Accept-Encoding/);
      expect(hit.body).toBe(BODY);
    }
    expect(await storeGzipInput(pair.gw)).toBe(before);
  });

  it('the first gzip client makes it once; the hits after it, gzip or not, find it made', async () => {
    const u = url();
    await http(u);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const before = await storeGzipInput(pair.gw);
    // The first is answered on the fresh-hit path, the second too; a HEAD and an identity client after them.
    for (let i = 0; i < 3; i++) {
      const hit = await bytes(u, { 'accept-encoding': 'gzip, deflate' });
      expect(said(hit, 'x-cache')).toBe('hit');
      expect(said(hit, 'content-encoding')).toBe('gzip');
      expect(said(hit, 'vary')).toMatch(/Accept-Encoding/);
      expect(gunzipSync(hit.bytes).toString()).toBe(BODY);
    }
    expect(await storeGzipInput(pair.gw)).toBe(before + Buffer.byteLength(BODY));
    const identity = await http(u);
    expect(header(identity, 'content-encoding')).toBeUndefined();
    expect(identity.body).toBe(BODY);
  });

  it('a gzip client’s miss is compressed for it and stored compressed: its hits make nothing', async () => {
    const u = url();
    const before = await storeGzipInput(pair.gw);
    const miss = await bytes(u, { 'accept-encoding': 'gzip' });
    expect(said(miss, 'x-cache')).toBe('miss');
    expect(said(miss, 'content-encoding')).toBe('gzip');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const hit = await bytes(u, { 'accept-encoding': 'gzip' });
    expect(said(hit, 'content-encoding')).toBe('gzip');
    expect(gunzipSync(hit.bytes).toString()).toBe(BODY);
    expect(await storeGzipInput(pair.gw)).toBe(before + Buffer.byteLength(BODY));
  });

  it('an answer gzip does not pay for is tried once, then served as it is', async () => {
    const u = url('noise');
    await http(u);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const before = await storeGzipInput(pair.gw);
    for (let i = 0; i < 3; i++) {
      const hit = await bytes(u, { 'accept-encoding': 'gzip' });
      expect(said(hit, 'x-cache')).toBe('hit');
      expect(said(hit, 'content-encoding')).toBeUndefined();
      expect(hit.bytes.equals(NOISE)).toBe(true);
    }
    expect(await storeGzipInput(pair.gw)).toBe(before + NOISE.length);
  });

  it('a gzip client’s miss that gzip does not pay for is not tried again by its hits', async () => {
    const u = url('noise');
    const before = await storeGzipInput(pair.gw);
    await bytes(u, { 'accept-encoding': 'gzip' });
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    for (let i = 0; i < 3; i++) {
      const hit = await bytes(u, { 'accept-encoding': 'gzip' });
      expect(said(hit, 'x-cache')).toBe('hit');
      expect(said(hit, 'content-encoding')).toBeUndefined();
    }
    expect(await storeGzipInput(pair.gw)).toBe(before + NOISE.length);
  });

  it('clients that find a large entry while its gzip is being made do not make it again', async () => {
    const u = url('large');
    await http(u);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const before = await storeGzipInput(pair.gw);
    const hits = await Promise.all(Array.from({ length: 20 }, () => bytes(u, { 'accept-encoding': 'gzip' })));
    for (const hit of hits) {
      expect(said(hit, 'x-cache')).toBe('hit');
      const body = said(hit, 'content-encoding') === 'gzip' ? gunzipSync(hit.bytes) : hit.bytes;
      expect(body.toString()).toBe(LARGE);
    }
    const after = await bytes(u, { 'accept-encoding': 'gzip' });
    expect(said(after, 'content-encoding')).toBe('gzip');
    expect(await storeGzipInput(pair.gw)).toBe(before + Buffer.byteLength(LARGE));
  });

  it('a background refresh of an entry some client took the gzip of stores it in gzip again', async () => {
    const u = url('short');
    await http(u);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    await bytes(u, { 'accept-encoding': 'gzip' });
    await new Promise((r) => setTimeout(r, 1_200));
    const before = await storeGzipInput(pair.gw);
    const stale = await http(u);
    expect(header(stale, 'x-cache')).toBe('stale');
    // The refresh compressed its answer as it stored it, before any gzip client came back.
    await until('the refresh stored', async () => (await storeGzipInput(pair.gw)) > before);
    expect(await storeGzipInput(pair.gw)).toBe(before + Buffer.byteLength(BODY));
    const hit = await bytes(u, { 'accept-encoding': 'gzip' });
    expect(said(hit, 'content-encoding')).toBe('gzip');
    expect(await storeGzipInput(pair.gw)).toBe(before + Buffer.byteLength(BODY));
  });
});
