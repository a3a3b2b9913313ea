// The default deployment (WIKIEDGE_WORKERS=1, src/cluster/single.ts) answers the admin
// inspection routes from the gateway current at each request: GET /cache sees what the public
// listener cached, and after a SIGHUP GET /config shows the new value and POST /trace runs
// through the new gateway. (The admin-* in-process tests build the gateway directly; this one is
// the spawned process an operator runs.)
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminGet, adminPost } from '../support/admin.js';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('admin inspection in the default deployment', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const query = '/w/api.php?action=query&meta=siteinfo&format=json';

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    });
    file = path.join(scratchDir('wikiedge-admin-single-'), 'wikiedge.yaml');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: file, WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('GET /cache lists the entry the public listener stored', async () => {
    expect((await http(`${gw.url}${query}`)).headers['x-cache']).toBe('miss');
    const seen = await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(query)}`);
    expect(seen.status).toBe(200);
    const body = JSON.parse(seen.body) as { variants: { tier: string }[] };
    expect(body.variants.length).toBeGreaterThan(0);
    expect(body.variants[0]!.tier).toBe('local');
  });

  it('after a reload, GET /config shows the new value and the entry is still listed', async () => {
    const before = JSON.parse((await adminGet(gw.adminUrl, '/config')).body) as Record<string, unknown>;
    expect(JSON.stringify(before)).toContain('8192');
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    const after = await adminGet(gw.adminUrl, '/config');
    expect(after.status).toBe(200);
    expect(after.body).toContain('4096');
    expect(after.body).not.toContain('8192');
    const listed = JSON.parse((await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(query)}`)).body) as { variants: unknown[] };
    expect(listed.variants.length).toBeGreaterThan(0);
  });

  it('POST /trace runs through the current gateway', async () => {
    const traced = await adminPost(gw.adminUrl, `/trace?url=${encodeURIComponent(query)}`);
    expect(traced.status).toBe(200);
    expect(traced.body).toContain('lookup');
  });
});
