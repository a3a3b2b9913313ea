// The built gateway with WIKIEDGE_LOG_HITS makes its hit lines on a thread of its own
// (src/log-records.ts, src/hit-log-worker.ts): the thread is there under its name, every hit
// gets its line (with the fields the event loop's line has), the lines of hits answered just
// before a SIGTERM are written before the process exits, and a cluster worker logs its hits
// through its own thread.
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { answerPublicEchoingHeaders, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';
import { until } from '../support/until.js';

let upstream: FakeUpstream | undefined;
let gateway: SpawnedGateway | undefined;
afterEach(async () => {
  if (gateway && gateway.child.exitCode === null) {
    gateway.child.kill('SIGKILL');
    await gateway.exited;
  }
  await upstream?.close();
  gateway = upstream = undefined;
});

const hitLines = (stdout: string) =>
  stdout
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l['cache'] === 'hit');

/** The names of the threads of process `pid` (Linux). */
function threadNames(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim());
}

describe.runIf(built)('hit lines from the log thread', () => {
  it('every hit has its line, the last ones written at SIGTERM, by a thread named wikiedge-log', async () => {
    upstream = await startFakeUpstream(answerPublicEchoingHeaders);
    gateway = await spawnGateway(upstream.url, { WIKIEDGE_LOG_HITS: 'true' });
    expect(threadNames(gateway.child.pid!)).toContain('wikiedge-log');
    const url = `${gateway.url}/w/api.php?action=query&meta=siteinfo&format=json`;
    expect((await http(url)).headers['x-cache']).toBe('miss');
    const hits = 300;
    for (let i = 0; i < hits; i++) await http(url, { headers: { 'user-agent': i % 2 ? 'mwn/2.0 (bot "x")' : 'curl/8' } });
    // At once: the thread sleeps up to 10 ms and the event loop takes its lines every 20 ms, so
    // the last hits' lines are still on their way unless the exit waits for them.
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    const lines = hitLines(gateway.stdout());
    expect(lines).toHaveLength(hits);
    expect(lines[hits - 1]).toMatchObject({
      level: 30,
      service: 'wikiedge',
      method: 'GET',
      path: '/w/api.php',
      url: '/w/api.php?action=query&meta=siteinfo&format=json',
      module: 'query+siteinfo',
      cache: 'hit',
      status: 200,
      client: '127.0.0.1',
      ua: 'mwn/2.0 (bot "x")',
      msg: 'request',
    });
    expect(new Set(lines.map((l) => l['reqId'])).size).toBe(hits);
    expect(lines.every((l) => typeof l['bytesOut'] === 'number' && (l['bytesOut'] as number) > 0)).toBe(true);
  });

  it('writes lines while the process runs, not only at exit', async () => {
    upstream = await startFakeUpstream(answerPublicEchoingHeaders);
    gateway = await spawnGateway(upstream.url, { WIKIEDGE_LOG_HITS: 'true' });
    const url = `${gateway.url}/w/api.php?action=query&meta=siteinfo&format=json`;
    for (let i = 0; i < 5; i++) await http(url);
    // The batches go out every 250 ms (logging.ts).
    await until(async () => hitLines(gateway!.stdout()).length, (n) => n === 4);
  });

  it('a cluster worker logs its hits through its own thread', async () => {
    upstream = await startFakeUpstream(answerPublicEchoingHeaders);
    gateway = await spawnGateway(upstream.url, { WIKIEDGE_LOG_HITS: 'true', WIKIEDGE_WORKERS: '2' });
    const url = `${gateway.url}/w/api.php?action=query&meta=siteinfo&format=json`;
    for (let i = 0; i < 20; i++) await http(url, { headers: { connection: 'close' } });
    gateway.child.kill('SIGTERM');
    expect(await gateway.exited).toBe(0);
    const lines = hitLines(gateway.stdout());
    // Each worker's first request for the URL was a miss (a cache per worker).
    expect(lines.length).toBeGreaterThanOrEqual(18);
    expect(lines.every((l) => typeof l['worker'] === 'number')).toBe(true);
  });
});
