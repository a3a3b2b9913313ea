// A reload without Redis keeps the cache: each replaced worker hands its shared entries to the
// worker that takes its place (cluster/tier-hand-over.ts) before it drains, so what was cached
// before the SIGHUP is served as hits after it, and the wiki is not asked again. Before, every
// new worker started empty and asked the wiki once per key.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const PAGES = 6;

describe.runIf(built && existsSync('dist/main.js'))('a reload without Redis', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  // A page's info: siteinfo's general part carries the wiki's clock and is kept 2 s only.
  const q = (i: number) => `/w/api.php?action=query&prop=info&titles=Handover_${i}&format=json`;
  /** A new connection per request, so that both workers get some (SCHED_NONE: the kernel chooses). */
  const get = async (i: number) => (await http(`${gw.url}${q(i)}`, { headers: { connection: 'close' } })).headers['x-cache'];
  const asked = (i: number) => fake.requests.filter((r) => r.url?.includes(`titles=Handover_${i}&`) || r.url?.endsWith(`titles=Handover_${i}`)).length;
  const sharedEntries = async () => Number(/^wikiedge_cache_entries\{tier="shared"\} (\d+)/m.exec((await http(`${gw.adminUrl}/metrics`)).body)?.[1]);

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(`{"batchcomplete":true,"pad":"${'x'.repeat(2000)}"}`);
    });
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2' });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('serves what both workers cached before the SIGHUP as hits after it, without asking the wiki', async () => {
    // Until both workers hold every page (each asked the wiki once), within a bound.
    for (let i = 0; i < PAGES; i++) for (let n = 0; n < 200 && asked(i) < 2; n++) await get(i);
    // The page requests only: the primary's probe asks the wiki for other things, again at a reload.
    const pageRequests = () => Array.from({ length: PAGES }, (_, i) => asked(i)).reduce((a, b) => a + b, 0);
    const before = pageRequests();
    const heldByBoth = Array.from({ length: PAGES }, (_, i) => i).filter((i) => asked(i) === 2).length;
    const entries = await sharedEntries();
    expect(entries).toBeGreaterThanOrEqual(PAGES);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    expect(logged(gw, 'reload: local tier handed over')).toHaveLength(2);
    expect(await sharedEntries()).toBe(entries);
    const answers = new Set<unknown>();
    for (let i = 0; i < PAGES; i++) for (let n = 0; n < 5; n++) answers.add(await get(i));
    // Both old workers held every page (the loop above asked until each had): so do both new ones.
    expect(heldByBoth).toBe(PAGES);
    expect([...answers]).toEqual(['hit']);
    expect(pageRequests()).toBe(before);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
