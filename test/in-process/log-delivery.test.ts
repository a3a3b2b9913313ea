// Log lines are written to stdout in batches (src/observe/logging.ts): a quiet gateway's request line
// still shows up within the flush interval, and every line is there when the process exits.
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, spawnGateway } from '../support/spawned.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('log delivery', () => {
  let fake: FakeUpstream | undefined;
  afterEach(() => fake?.close());

  it.runIf(built)('a lone request line appears within the flush interval; all lines are out at exit', async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":""}');
    });
    const gw = await spawnGateway(fake.url);
    const lines = () =>
      gw
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);

    await http(`${gw.url}/w/api.php?action=query&meta=userinfo&format=json&n=lonely`, {
      headers: { 'x-request-id': 'lonely-request' },
    });
    // Far fewer than 64 KiB of lines: only the periodic flush can bring this one out.
    let seenAfter = -1;
    for (let waited = 0; waited <= 2_000; waited += 50) {
      if (lines().some((l) => l['reqId'] === 'lonely-request')) {
        seenAfter = waited;
        break;
      }
      await sleep(50);
    }
    expect(seenAfter).toBeGreaterThanOrEqual(0);
    expect(seenAfter).toBeLessThanOrEqual(1_000);

    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    const messages = lines().map((l) => l['msg']);
    expect(messages).toContain('shutting down: draining in-flight requests');
    expect(messages.at(-1)).toBe('shutdown complete');
  });

  it.runIf(built)('every line of a burst is out at exit, each once, in the order served', async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":""}');
    });
    const gw = await spawnGateway(fake.url);
    // ~250 bytes a line: 400 lines are a full 64 KiB batch or more and a partial one held at exit.
    const ids = Array.from({ length: 400 }, (_, i) => `burst-${i}`);
    for (const id of ids) {
      await http(`${gw.url}/w/api.php?action=query&meta=userinfo&format=json`, { headers: { 'x-request-id': id } });
    }
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    const logged = gw
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as Record<string, unknown>)['reqId'])
      .filter((id): id is string => typeof id === 'string' && id.startsWith('burst-'));
    expect(logged).toEqual(ids);
  });
});
