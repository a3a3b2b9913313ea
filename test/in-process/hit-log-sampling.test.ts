// WIKIEDGE_LOG_HITS: by default every hit is logged, as every other request is (nginx's and
// varnishncsa's default); `false` counts hits in the metrics only, a fraction logs that share.
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

function publicWiki(): Promise<FakeUpstream> {
  return startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
    res.end('{"batchcomplete":true}');
  });
}

describe('hit log sampling', () => {
  let fake: FakeUpstream | undefined;
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function tenHits(env: Record<string, string>, random?: () => number) {
    fake = await publicWiki();
    gw = await startGateway(fake.url, env, random ? { random } : {});
    const q = `${gw.apiUrl}?action=query&meta=siteinfo&format=json`;
    expect(header(await http(q), 'x-cache')).toBe('miss');
    for (let i = 0; i < 10; i++) expect(header(await http(q), 'x-cache')).toBe('hit');
    const lines = gw.logs.filter((l) => l['msg'] === 'request');
    const metrics = await (await http(`${gw.adminUrl}/metrics`)).body;
    return {
      missLines: lines.filter((l) => l['cache'] === 'miss').length,
      hitLines: lines.filter((l) => l['cache'] === 'hit').length,
      countedHits: Number(/^wikiedge_requests_total\{disposition="hit"[^}]*\} (\d+)$/m.exec(metrics)?.[1]),
    };
  }

  it('by default: every hit logged and counted, the miss logged', async () => {
    expect(await tenHits({})).toEqual({ missLines: 1, hitLines: 10, countedHits: 10 });
  });

  it('false: hits counted, not logged; the miss logged', async () => {
    expect(await tenHits({ WIKIEDGE_LOG_HITS: 'false' })).toEqual({ missLines: 1, hitLines: 0, countedHits: 10 });
  });

  it('true: every hit logged', async () => {
    expect(await tenHits({ WIKIEDGE_LOG_HITS: 'true' })).toEqual({ missLines: 1, hitLines: 10, countedHits: 10 });
  });

  it('a fraction: that share of hits logged (the injected random draws decide)', async () => {
    let n = 0;
    const draws = () => (n++ % 2 === 0 ? 0.1 : 0.9); // below 0.5 every other time
    const result = await tenHits({ WIKIEDGE_LOG_HITS: '0.5', WIKIEDGE_TTL_JITTER_RATIO: '0' }, draws);
    expect(result.missLines).toBe(1);
    expect(result.countedHits).toBe(10);
    expect(result.hitLines).toBeGreaterThanOrEqual(4);
    expect(result.hitLines).toBeLessThanOrEqual(6);
  });
});
