// The access log's format and file are reload settings. Every generation of the default
// deployment shares the process's logger, and the writer was kept per logger and replaced while
// the new gateway was being built: a reload that then failed (Redis refused the new settings)
// said "the old configuration keeps serving", while the serving gateway wrote its lines in the
// new format to the new file. And a reload that succeeded kept the old file open for good, which
// every SIGUSR1 created again after logrotate had moved it. Each gateway has its writer now, and
// a file no gateway writes to is closed.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { redisInstalled } from '../support/redis-backends.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built && redisInstalled)('the access log at a reload', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let primary: TestRedis;
  let replica: TestRedis;
  let dir: string;
  const first = () => path.join(dir, 'first.log');
  const second = () => path.join(dir, 'second.log');
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean) : []);
  const ask = (tag: string) => http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&n=${tag}`);

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
      res.end('{"batchcomplete":true}');
    });
    [primary, replica] = await Promise.all([startRedis(), startRedis()]);
    await replica.command(`REPLICAOF 127.0.0.1 ${primary.port}`);
    dir = scratchDir('wikiedge-log-reload-failed-');
    writeFileSync(path.join(dir, 'wikiedge.yaml'), `accessLogFile: ${first()}\n`);
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: path.join(dir, 'wikiedge.yaml') });
  }, 60_000);
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
    await Promise.all([primary?.stop(), replica?.stop()]);
  });

  const reload = async (yaml: string, done: RegExp) => {
    const before = logged(gw, done).length;
    writeFileSync(path.join(dir, 'wikiedge.yaml'), yaml);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, done).length === before + 1, 30_000);
  };

  it('a reload that failed leaves the format and the file as they were', async () => {
    await ask('before');
    await reload(
      `accessLogFile: ${second()}\naccessLogFormat: combined\nredisUrl: redis://127.0.0.1:${replica.port}\nidentitySecret: reload-refused-by-redis-secret-0123456789\n`,
      /^reload failed/,
    );
    await ask('after-failed');
    await vi.waitFor(() => expect(lines(first()).some((l) => l.includes('n=after-failed'))).toBe(true), { timeout: 10_000 });
    const line = lines(first()).find((l) => l.includes('n=after-failed'))!;
    expect(() => JSON.parse(line) as unknown).not.toThrow();
    expect(lines(second())).toEqual([]);
  }, 60_000);

  it('a reload that succeeded lets the old file go: SIGUSR1 reopens only the new one', async () => {
    await reload(`accessLogFile: ${second()}\n`, /^reload complete/);
    await ask('after-moved');
    await vi.waitFor(() => expect(lines(second()).some((l) => l.includes('n=after-moved'))).toBe(true), { timeout: 10_000 });
    // logrotate moves the old file away; the reopen must not make it again.
    renameSync(first(), `${first()}.1`);
    const reopened = logged(gw, 'access log reopened').length;
    gw.child.kill('SIGUSR1');
    await untilLogged(gw, () => logged(gw, 'access log reopened').length === reopened + 1);
    expect(logged(gw, 'access log reopened').at(-1)).toMatchObject({ files: 1 });
    expect(existsSync(first())).toBe(false);
  }, 60_000);
});
