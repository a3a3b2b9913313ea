// The single process, WIKIEDGE_RC_FOLLOW=true, no Redis: a reload hands the local tier over to
// the new gateway (docs/OPERATIONS.md, "Reload"), and its follower goes on from the old one's
// cursor (src/gateway/gateway.ts processCursor). With a cursor of its own it started with none:
// a `cursor-lost` gap expired every entry just handed over, and 5 hits became 5 misses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { FakeRecentChanges } from '../support/fake-recentchanges.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built)('a single-process reload with the follower and no Redis', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  const wiki = new FakeRecentChanges();
  let clock: NodeJS.Timeout;
  let pageAsks = 0;

  beforeAll(async () => {
    wiki.clock = Date.now();
    clock = setInterval(() => (wiki.clock = Date.now()), 200);
    fake = await startFakeUpstream((req, res) => {
      const url = req.url ?? '';
      if (url.includes('list=recentchanges') || (url.includes('meta=siteinfo') && url.includes('namespaces'))) return wiki.handler(req, res);
      if (url.includes('titles=Page_')) pageAsks++;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    gw = await spawnGateway(fake.url, { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: '250' });
  });
  afterAll(async () => {
    clearInterval(clock);
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('keeps its hits: no cursor-lost gap after the reload', async () => {
    const ask = async (i: number) => (await http(`${gw.url}/w/api.php?action=query&prop=info&titles=Page_${i}&format=json`)).headers['x-cache'];
    // The first follower has polled (taken its start's gap, saved its cursor) before anything is cached.
    await untilLogged(gw, () => logged(gw, /^change follower: it cannot vouch/).length === 1);
    for (let i = 0; i < 5; i++) await ask(i);
    const before: unknown[] = [];
    for (let i = 0; i < 5; i++) before.push(await ask(i));
    expect(before).toEqual(['hit', 'hit', 'hit', 'hit', 'hit']);
    const asksBefore = pageAsks;

    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    // A few of the new follower's polls (each asks the wiki's recentchanges once at least).
    const rcAsks = wiki.queries.length;
    await untilLogged(gw, () => wiki.queries.length >= rcAsks + 3);
    const after: unknown[] = [];
    for (let i = 0; i < 5; i++) after.push(await ask(i));
    expect(after).toEqual(before);
    expect(pageAsks).toBe(asksBefore);
    // The first follower's, at start; none since.
    expect(logged(gw, /^change follower: it cannot vouch/).map((l) => l['gap'])).toEqual(['cursor-lost']);
  });
});
