// WIKIEDGE_WORKERS=2: a reload whose first new worker exits before it listens stops there
// (supervisor.ts replaceAll); the old workers serve on. A worker that dies after that must come
// back with the configuration the running workers have, not with the one whose worker just
// died (src/cluster/primary.ts: the primary adopts a configuration once every worker runs it,
// and puts the old one back when a reload stops). Here the new worker is killed before it
// listens (as an out-of-memory kill would), then both old workers: their replacements must still
// take a 2,000-byte URL (WIKIEDGE_MAX_URL_BYTES 8192), which the stopped reload's 1024 refuses.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

/** The primary's children now (Linux: /proc/<pid>/task/<pid>/children). */
function children(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

describe.runIf(built)('a reload stopped halfway', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
      res.end('{"batchcomplete":true}');
    });
    file = path.join(scratchDir('wikiedge-reload-stopped-'), 'wikiedge.yaml');
    writeFileSync(file, 'workers: 2\nmaxUrlBytes: 8192\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: file });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('workers restarted after it run the old configuration', async () => {
    const long = () => http(`${gw.url}/w/api.php?action=query&format=json&titles=${'x'.repeat(2_000)}`);
    expect((await long()).status).toBe(200);
    const old = logged(gw, 'worker listening').map((l) => Number(l['pid']));

    writeFileSync(file, 'workers: 2\nmaxUrlBytes: 1024\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, /^reload: configuration valid/).length === 1);
    // The first new worker, killed before it listens.
    let killed = 0;
    for (let i = 0; i < 2_000 && killed === 0; i++) {
      const fresh = children(gw.child.pid!).filter((pid) => !old.includes(pid));
      if (fresh.length > 0) process.kill((killed = fresh[0]!), 'SIGKILL');
      else await sleep(5);
    }
    expect(killed).not.toBe(0);
    await untilLogged(gw, () => logged(gw, /^reload stopped/).length === 1);
    expect(logged(gw, 'worker listening')).toHaveLength(2);
    expect((await long()).status).toBe(200);

    // Both old workers die: every worker serving now is one restarted after the stopped reload.
    for (const pid of old) process.kill(pid, 'SIGKILL');
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 4);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await long()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    // Not a crash loop: each restarted once.
    await sleep(1_000);
    expect(logged(gw, 'worker died: restarting it')).toHaveLength(2);
  });
});
