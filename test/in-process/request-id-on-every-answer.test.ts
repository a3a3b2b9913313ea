// Every answer carries X-Request-Id (docs/REQUESTS.md, "Headers to and from the wiki"): hits, misses,
// pages streamed through, PURGE accepted or refused, malformed and oversized targets.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, rawTarget } from '../support/http.js';

describe('X-Request-Id on every answer', () => {
  let fake: FakeUpstream;
  let trusting: RunningGateway;
  let untrusting: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    trusting = await startGateway(fake.url);
    untrusting = await startGateway(fake.url, { WIKIEDGE_TRUSTED_PROXIES: '192.0.2.10', WIKIEDGE_PURGE_ALLOW: '192.0.2.10' });
  });
  afterAll(async () => {
    await trusting.close();
    await untrusting.close();
    await fake.close();
  });

  const api = '/w/api.php?action=query&meta=siteinfo&format=json';
  it.each([
    ['a miss', (gw: RunningGateway) => http(`${gw.url}${api}&n=1`), 'GET'],
    ['a hit', (gw: RunningGateway) => http(`${gw.url}${api}&n=1`), 'GET'],
    ['a page streamed through', (gw: RunningGateway) => http(`${gw.url}/w/index.php?title=Main_Page`), 'GET'],
    ['an accepted PURGE', (gw: RunningGateway) => http(`${gw.url}${api}&n=1`, { method: 'PURGE' }), 'PURGE'],
    ['a malformed target', (gw: RunningGateway) => rawTarget(gw.url, '/w/api.php/%zz'), 'GET'],
    // Over WIKIEDGE_MAX_URL_BYTES (8 KiB), under Node's 16 KiB header limit.
    ['a target over the length limit', (gw: RunningGateway) => http(`${gw.url}${api}&pad=${'x'.repeat(9_000)}`), 'GET'],
  ])('%s', async (_what, send) => {
    const res = await send(trusting);
    expect(header(res, 'x-request-id')).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
  });

  it('a refused PURGE', async () => {
    const res = await http(`${untrusting.url}${api}`, { method: 'PURGE' });
    expect(res.status).toBe(405);
    expect(header(res, 'x-request-id')).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
  });
});
