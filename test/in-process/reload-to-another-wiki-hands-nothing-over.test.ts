// A reload that points the gateway at another wiki (WIKIEDGE_UPSTREAM changed in the
// WIKIEDGE_CONFIG file) answers from the new wiki at once: the old gateway's (or the replaced
// workers') local tier is not handed over, as its entries are the old wiki's answers and would be
// adopted as fresh (config/reload-keys.ts WIKI_KEYS; cluster/reload.ts mayHandOver). One line
// says so. The same for a single process and for a cluster's workers.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { scratchDir } from '../support/scratch.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const Q = '/w/api.php?action=query&prop=info&titles=Which_wiki&format=json';

describe.runIf(built).each(['1', '2'])('a reload to another wiki, WIKIEDGE_WORKERS=%s', (workers) => {
  let wikiA: FakeUpstream;
  let wikiB: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const wiki = (name: string) =>
    startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(`{"batchcomplete":true,"wiki":"${name}"}`);
    });
  /** A new connection per request, so that with two workers both get some (the kernel chooses). */
  const get = () => http(`${gw.url}${Q}`, { headers: { connection: 'close' } });
  const asked = (fake: FakeUpstream) => fake.requests.filter((r) => r.url?.includes('titles=Which_wiki')).length;

  beforeAll(async () => {
    [wikiA, wikiB] = [await wiki('A'), await wiki('B')];
    file = path.join(scratchDir('wikiedge-another-wiki-'), 'wikiedge.yaml');
    writeFileSync(file, `upstream: ${wikiA.url}\n`);
    // Empty in the environment, so that the file's value counts (and a reload can change it).
    gw = await spawnGateway('', { WIKIEDGE_CONFIG: file, WIKIEDGE_WORKERS: workers });
    if (workers === '2') await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await wikiA?.close();
    await wikiB?.close();
  });

  it('answers from the new wiki, not with the old wiki’s cached answer', async () => {
    // Until every worker holds wiki A's answer (each asks once), within a bound.
    for (let n = 0; n < 200 && asked(wikiA) < Number(workers); n++) await get();
    const before = await get();
    expect(before.headers['x-cache']).toBe('hit');
    expect(JSON.parse(before.body)).toMatchObject({ wiki: 'A' });

    writeFileSync(file, `upstream: ${wikiB.url}\n`);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, /^reload (complete|failed|stopped|refused)/).length > 0);
    expect(logged(gw, 'reload complete')[0]).toMatchObject({ changed: ['WIKIEDGE_UPSTREAM'] });

    for (let n = 0; n < 6; n++) expect(JSON.parse((await get()).body)).toMatchObject({ wiki: 'B' });
    expect(asked(wikiB)).toBeGreaterThanOrEqual(1);
    expect(logged(gw, /^reload: the cache is of another wiki/)).toEqual([expect.objectContaining({ changed: ['WIKIEDGE_UPSTREAM'] })]);
    expect(logged(gw, /^reload: local tier handed over/)).toEqual([]);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
