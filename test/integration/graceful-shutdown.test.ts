// SIGTERM: stop accepting, finish in-flight requests, close upstream sockets, exit 0; with a drain
// delay, /readyz turns 503 at once while requests are still served until the delay is over.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';

const main = path.resolve(import.meta.dirname, '../../dist/main.js');

describe('graceful shutdown', () => {
  let fake: FakeUpstream | undefined;
  afterEach(() => fake?.close());

  it.runIf(existsSync(main))('finishes every in-flight request, then exits 0', async () => {
    // A wiki that takes 600 ms per answer.
    fake = await startFakeUpstream((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{"batchcomplete":""}');
      }, 600);
    });
    const [port, adminPort] = [await closedPort(), await closedPort()];
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env['PATH'] ?? '',
        WIKIEDGE_UPSTREAM: fake.url,
        WIKIEDGE_HOST: '127.0.0.1',
        WIKIEDGE_PORT: String(port),
        WIKIEDGE_ADMIN_PORT: String(adminPort),
        WIKIEDGE_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 100; i++) {
      const ok = await http(`http://127.0.0.1:${adminPort}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const inFlight = Array.from({ length: 20 }, (_, i) =>
      http(`http://127.0.0.1:${port}/w/api.php?action=query&list=filearchive&format=json&n=${i}`),
    );
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    // Nothing listens any more.
    await expect(http(`http://127.0.0.1:${port}/w/api.php`)).rejects.toThrow();
  });

  it.runIf(existsSync(main))('with a drain delay: /readyz is 503 at once, requests are served (Connection: close) until it is over', async () => {
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
        WIKIEDGE_LOG_LEVEL: 'warn',
        WIKIEDGE_SHUTDOWN_DRAIN_MS: '1500',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 100; i++) {
      const ready = await http(`http://127.0.0.1:${adminPort}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const api = `http://127.0.0.1:${port}/w/api.php?action=query&meta=siteinfo&format=json`;
    expect(header(await http(api), 'connection')).toBe('keep-alive');

    const sigtermAt = Date.now();
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    const readyz = await http(`http://127.0.0.1:${adminPort}/readyz`);
    expect(readyz.status).toBe(503);
    expect(JSON.parse(readyz.body)).toEqual({ status: 'unready', reason: 'shutting-down' });
    const during = await http(api);
    expect(during.status).toBe(200);
    expect(header(during, 'connection')).toBe('close');
    expect(Date.now() - sigtermAt).toBeLessThan(1500);

    expect(await exited).toBe(0);
    expect(Date.now() - sigtermAt).toBeGreaterThanOrEqual(1500);
    expect(stderr).toBe('');
  });
});
