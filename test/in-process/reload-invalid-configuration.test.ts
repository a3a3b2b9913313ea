// SIGHUP with a configuration that is invalid, or that changes a key only a restart can change:
// one error line naming the key, and nothing changes: the same workers go on serving.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('SIGHUP with a configuration it cannot apply', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const refusals = () => logged(gw, /^reload refused/);

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    });
    file = path.join(scratchDir('wikiedge-reload-'), 'wikiedge.yaml');
    // The number of workers from the file: the environment wins over the file, so a key set there
    // could not be changed by a reload at all (docs/OPERATIONS.md, "Reload").
    writeFileSync(file, 'workers: 2\ngraceSeconds: 10\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: file });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it.each([
    ['an invalid value', 'workers: 2\ngraceSeconds: -1\n', 'WIKIEDGE_GRACE_SECONDS', 'WIKIEDGE_GRACE_SECONDS: must be an integer from 0 to 86400'],
    ['a file that is not YAML', 'graceSeconds: [1,\n', 'WIKIEDGE_CONFIG', 'is not valid YAML'],
    ['an unknown key', 'graceSecs: 5\n', 'graceSecs', 'graceSecs: is not a known configuration key'],
    [
      'a listener’s address',
      'workers: 2\ngraceSeconds: 5\nadminHost: 127.0.0.2\n',
      'WIKIEDGE_ADMIN_HOST',
      'WIKIEDGE_ADMIN_HOST cannot change without a restart',
    ],
    ['the number of workers', 'workers: 3\n', 'WIKIEDGE_WORKERS', 'WIKIEDGE_WORKERS cannot change without a restart'],
  ])('%s: one line naming the key; the same workers serve on', async (_what, content, key, words) => {
    writeFileSync(file, content);
    const before = refusals().length;
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => refusals().length === before + 1);
    const line = refusals()[before]!;
    expect(line['level']).toBe(50);
    expect(line['key']).toBe(key);
    expect(String(line['msg'])).toContain(words);
    expect(String(line['msg'])).toContain('the old configuration keeps serving');
    // No worker was started or stopped.
    expect(logged(gw, 'worker listening')).toHaveLength(2);
    expect(logged(gw, 'worker exited')).toHaveLength(0);
    expect(logged(gw, /^reload: configuration valid/)).toHaveLength(0);
    for (let i = 0; i < 4; i++) {
      expect((await http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json`, { headers: { connection: 'close' } })).status).toBe(200);
    }
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
