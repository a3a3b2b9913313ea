// The fresh-hit path (src/api/fresh-hit.ts) only remembers what the full path decided: for every
// shape of stored answer a stand-in wiki can give, it sends the full path's header lines and
// body byte for byte (only Date and X-Request-Id differ), and keyed-header variants never cross.
// No wiki needed: the real-wiki twin is test/integration/fresh-hit-equivalence.test.ts.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as freshHit from '../../src/api/fresh-hit.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { exchange, headerOf, stableHeaders } from '../support/raw-exchange.js';

const served = vi.hoisted(() => ({ fresh: [] as boolean[] }));
vi.mock('../../src/api/fresh-hit.js', async (importOriginal) => {
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
