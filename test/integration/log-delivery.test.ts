// Log lines are written to stdout in batches (src/logging.ts): a quiet gateway's request line
// still shows up within the flush interval, and every line is there when the process exits.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';

const main = path.resolve(import.meta.dirname, '../../dist/main.js');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('log delivery', () => {
  let fake: FakeUpstream | undefined;
  afterEach(() => fake?.close());

  it.runIf(existsSync(main))('a lone request line appears within the flush interval; all lines are out at exit', async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":""}');
    });
    const [port, adminPort] = [await closedPort(), await closedPort()];
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env['PATH'] ?? '',
        WIKIEDGE_UPSTREAM: fake.url,
        WIKIEDGE_HOST: '127.0.0.1',
        WIKIEDGE_PORT: String(port),
        WIKIEDGE_ADMIN_PORT: String(adminPort),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 100; i++) {
      if (await http(`http://127.0.0.1:${adminPort}/healthz`).then((r) => r.status === 200, () => false)) break;
      await sleep(50);
    }
    const lines = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

    await http(`http://127.0.0.1:${port}/w/api.php?action=query&meta=userinfo&format=json&n=lonely`, {
      headers: { 'x-request-id': 'lonely-request' },
    });
    // Far fewer than 8 KiB of lines: only the periodic flush can bring this one out.
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

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const messages = lines().map((l) => l['msg']);
    expect(messages).toContain('shutting down: draining in-flight requests');
    expect(messages.at(-1)).toBe('shutdown complete');
  });
});
