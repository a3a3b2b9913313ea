// The fresh-hit path (src/steps/fresh-hit.ts) only remembers what the full path decided: for every
// shape of stored answer a stand-in wiki can give, it sends the full path's header lines and
// body byte for byte (only Date and X-Request-Id differ), and keyed-header variants never cross.
// No wiki needed: the real-wiki twin is test/integration/fresh-hit-equivalence.test.ts.
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as freshHit from '../../src/steps/fresh-hit.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { exchange, headerOf, stableHeaders } from '../support/raw-exchange.js';

const served = vi.hoisted(() => ({ fresh: [] as boolean[] }));
vi.mock('../../src/steps/fresh-hit.js', async (importOriginal) => {
  const original = await importOriginal<typeof freshHit>();
  return {
    ...original,
    serveFreshHit: (...args: Parameters<typeof original.serveFreshHit>) => {
      const answered = original.serveFreshHit(...args);
      served.fresh.push(answered);
      return answered;
    },
  };
});

/** Answers shaped by the `shape` parameter, all shared-cacheable. */
function wiki(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const shape = url.searchParams.get('shape');
  const base = { 'cache-control': 's-maxage=60, max-age=60, public', vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie' };
  if (shape === 'no-content-type') {
    res.writeHead(200, base);
    res.end('plain bytes');
  } else if (shape === 'list-header') {
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.setHeader('x-list', ['one', 'two']);
    for (const [k, v] of Object.entries(base)) res.setHeader(k, v);
    res.end('{"list":true}');
  } else if (shape === 'large') {
    // Large enough to be stored compressed (src/http/codings.ts MIN_COMPRESS_BYTES).
    res.writeHead(200, { ...base, 'content-type': 'application/json; charset=utf-8', etag: '"v1"' });
    res.end(JSON.stringify({ batchcomplete: '', url: req.url, pages: Array.from({ length: 60 }, (_, i) => ({ pageid: i, title: `Page ${i}` })) }));
  } else if (shape === 'echo-proto') {
    res.writeHead(200, { ...base, 'content-type': 'application/json', vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie, X-Forwarded-Proto' });
    res.end(JSON.stringify({ proto: req.headers['x-forwarded-proto'] }));
  } else {
    res.writeHead(200, {
      ...base,
      'content-type': 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'content-disposition': 'inline; filename=api-result.json',
      expires: new Date(Date.now() + 60_000).toUTCString(),
    });
    res.end(JSON.stringify({ batchcomplete: '', url: req.url }));
  }
}

describe('the fresh-hit path sends what the full path sends', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(wiki);
    gw = await startGateway(fake.url);
  });
  afterAll(async () => {
    await gw.close();
    await fake.close();
  });

  it.each(['json', 'no-content-type', 'list-header'])('shape %s: same status line, header lines and body', async (shape) => {
    const target = `/w/api.php?action=query&format=json&shape=${shape}&requestid=${randomUUID()}`;
    const miss = await exchange(gw.url, 'GET', target);
    expect(headerOf(miss, 'x-cache')).toBe('miss');
    served.fresh.length = 0;
    const short = await exchange(gw.url, 'GET', target);
    // An unrelated cookie keeps the request anonymous (same entry) but out of the short path.
    const full = await exchange(gw.url, 'GET', target, { Cookie: 'unrelated=1' });
    expect(served.fresh).toEqual([true, false]);
    expect(short.statusLine).toBe(full.statusLine);
    expect(headerOf(short, 'x-cache')).toBe('hit');
    expect(stableHeaders(short)).toEqual(stableHeaders(full));
    expect(short.body.equals(full.body)).toBe(true);
  });

  it('keyed headers: a trusted proxy`s X-Forwarded-Proto alternating on one URL, each gets its own variant on both paths', async () => {
    const target = `/w/api.php?action=query&format=json&shape=echo-proto&requestid=${randomUUID()}`;
    for (const proto of ['http', 'https']) await exchange(gw.url, 'GET', target, { 'X-Forwarded-Proto': proto });
    for (let round = 0; round < 3; round++) {
      for (const proto of ['https', 'http']) {
        served.fresh.length = 0;
        const short = await exchange(gw.url, 'GET', target, { 'X-Forwarded-Proto': proto });
        const full = await exchange(gw.url, 'GET', target, { 'X-Forwarded-Proto': proto, Cookie: 'unrelated=1' });
        expect(served.fresh).toEqual([true, false]);
        expect(JSON.parse(short.body.toString()).proto).toBe(proto);
        expect(stableHeaders(short)).toEqual(stableHeaders(full));
        expect(short.body.equals(full.body)).toBe(true);
      }
    }
  });
});

describe('compressed entries: the fresh-hit path sends the representation the full path sends', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(wiki);
    gw = await startGateway(fake.url, { WIKIEDGE_BROTLI_AFTER_HITS: '2' });
  });
  afterAll(async () => {
    await gw.close();
    await fake.close();
  });

  const decoded = (r: { headers: string[]; body: Buffer }) => {
    const coding = headerOf(r as Parameters<typeof headerOf>[0], 'content-encoding');
    return coding === 'gzip' ? gunzipSync(r.body) : coding === 'br' ? brotliDecompressSync(r.body) : r.body;
  };

  /** The short path's answer and the full path's for the same entry and Accept-Encoding. */
  async function both(target: string, acceptEncoding: string | undefined, method = 'GET') {
    const ae: Record<string, string> = acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding };
    served.fresh.length = 0;
    const short = await exchange(gw.url, method, target, ae);
    const full = await exchange(gw.url, method, target, { ...ae, Cookie: 'unrelated=1' });
    return { short, full, fresh: [...served.fresh] };
  }

  it.each([undefined, 'gzip', 'gzip, deflate, br', 'br', 'identity', 'gzip;q=0.5, identity'])(
    'Accept-Encoding %j: same header lines and body on both paths, decoding to the identity answer',
    async (acceptEncoding) => {
      const target = `/w/api.php?action=query&format=json&shape=large&requestid=${randomUUID()}`;
      const miss = await exchange(gw.url, 'GET', target);
      expect(headerOf(miss, 'x-cache')).toBe('miss');
      const { short, full, fresh } = await both(target, acceptEncoding);
      expect(fresh).toEqual([true, false]);
      expect(stableHeaders(short)).toEqual(stableHeaders(full));
      expect(short.body.equals(full.body)).toBe(true);
      expect(decoded(short).equals(miss.body)).toBe(true);
      expect(headerOf(short, 'content-length')).toBe(String(short.body.length));
      expect(headerOf(short, 'vary')).toMatch(/Accept-Encoding/);
      const coding = headerOf(short, 'content-encoding');
      expect(coding).toBe(
        acceptEncoding?.startsWith('gzip') && !acceptEncoding.includes('identity') ? 'gzip' : acceptEncoding === 'gzip, deflate, br' ? 'gzip' : undefined,
      );
      // An encoded representation's strong ETag is weak (RFC 9110 §8.8.3).
      expect(headerOf(short, 'etag')).toBe(coding ? 'W/"v1"' : '"v1"');
    },
  );

  it('HEAD: the GET`s header lines (Content-Encoding, Content-Length) and no body, on both paths', async () => {
    const target = `/w/api.php?action=query&format=json&shape=large&requestid=${randomUUID()}`;
    await exchange(gw.url, 'GET', target);
    // The first HEAD of a target goes the full way (it is not remembered for HEAD yet).
    await exchange(gw.url, 'HEAD', target, { 'Accept-Encoding': 'gzip' });
    for (const ae of [undefined, 'gzip']) {
      const get = await exchange(gw.url, 'GET', target, ae ? { 'Accept-Encoding': ae } : {});
      const { short, full, fresh } = await both(target, ae, 'HEAD');
      expect(fresh).toEqual([true, false]);
      expect(stableHeaders(short)).toEqual(stableHeaders(full));
      expect(short.body.length + full.body.length).toBe(0);
      const withoutAge = (r: typeof get) => stableHeaders(r).filter((l) => !l.startsWith('age: '));
      expect(withoutAge(short)).toEqual(withoutAge(get));
    }
  });

  it('br, once made for a hot entry: both paths send it', async () => {
    const target = `/w/api.php?action=query&format=json&shape=large&requestid=${randomUUID()}`;
    const miss = await exchange(gw.url, 'GET', target);
    let last = miss;
    for (let i = 0; i < 50 && headerOf(last, 'content-encoding') !== 'br'; i++) {
      last = await exchange(gw.url, 'GET', target, { 'Accept-Encoding': 'gzip, deflate, br' });
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(headerOf(last, 'content-encoding')).toBe('br');
    const { short, full, fresh } = await both(target, 'gzip, deflate, br');
    expect(fresh).toEqual([true, false]);
    expect(stableHeaders(short)).toEqual(stableHeaders(full));
    expect(short.body.equals(full.body)).toBe(true);
    expect(brotliDecompressSync(short.body).equals(miss.body)).toBe(true);
  });

  it('a coding to be made (identity refused on a small entry) or none at all (406): the full path answers', async () => {
    const target = `/w/api.php?action=query&format=json&shape=json&requestid=${randomUUID()}`;
    const miss = await exchange(gw.url, 'GET', target);
    served.fresh.length = 0;
    const made = await exchange(gw.url, 'GET', target, { 'Accept-Encoding': 'gzip, identity;q=0' });
    expect(served.fresh).toEqual([false]);
    expect(headerOf(made, 'content-encoding')).toBe('gzip');
    expect(gunzipSync(made.body).equals(miss.body)).toBe(true);
    served.fresh.length = 0;
    const refused = await exchange(gw.url, 'GET', target, { 'Accept-Encoding': 'identity;q=0' });
    expect(served.fresh).toEqual([false]);
    expect(refused.statusLine).toBe('HTTP/1.1 406 Not Acceptable');
    expect(headerOf(refused, 'vary')).toBe('Accept-Encoding');
    expect(JSON.parse(refused.body.toString()).error.code).toBe('wikiedge-not-acceptable');
  });
});
