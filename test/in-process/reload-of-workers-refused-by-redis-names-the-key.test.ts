// WIKIEDGE_WORKERS=2: a reload whose new worker cannot start because Redis is not what the new
// settings say (here WIKIEDGE_REDIS_URL reaches a replica: src/cache/redis/server-check.ts
// RedisRefusal) stops, and its line said only which slot's worker exited with which code: the
// key to set and why were in that worker's stderr alone. The worker now tells the primary before
// it exits (src/cluster/worker-side.ts tellStartFailed), and the reload's line names them as
// `key` and `err`, as a refused configuration's does (the single process's:
// test/unit/reload-refused-by-redis-names-the-key.test.ts).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { redisInstalled } from '../support/redis-backends.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built && redisInstalled)('a reload of workers that Redis refuses', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let primary: TestRedis;
  let replica: TestRedis;
  let file: string;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
      res.end('{"batchcomplete":true}');
    });
    [primary, replica] = await Promise.all([startRedis(), startRedis()]);
    await replica.command(`REPLICAOF 127.0.0.1 ${primary.port}`);
    file = path.join(scratchDir('wikiedge-reload-refused-'), 'wikiedge.yaml');
    writeFileSync(file, 'workers: 2\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: file });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  }, 60_000);
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  it('names the key to set and why, and the old workers serve on', async () => {
    writeFileSync(file, `workers: 2\nredisUrl: redis://127.0.0.1:${replica.port}\nidentitySecret: reload-refused-by-redis-secret-0123456789\n`);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, /^reload stopped/).length === 1, 40_000);
    const line = logged(gw, /^reload stopped/)[0]!;
    expect(line['key']).toBe('WIKIEDGE_REDIS_URL');
    expect(String(line['err'])).toContain('reaches a replica');
    expect(line['changed']).toEqual(expect.arrayContaining(['WIKIEDGE_REDIS_URL']));
    expect((await http(`${gw.url}/w/api.php?action=query&format=json`)).status).toBe(200);
  }, 60_000);
});
