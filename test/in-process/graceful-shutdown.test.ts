// SIGTERM: stop accepting, finish in-flight requests, close upstream sockets, exit 0; with a drain
// delay, /readyz turns 503 at once while requests are still served until the delay is over.
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { built, spawnGateway } from '../support/spawned.js';
import { MANY_CLIENTS_FROM_LOOPBACK } from '../support/gateway.js';

describe('graceful shutdown', () => {
  let fake: FakeUpstream | undefined;
  afterEach(() => fake?.close());

  it.runIf(built)('finishes every in-flight request, then exits 0', async () => {
    // A wiki that takes 600 ms per answer.
    fake = await startFakeUpstream((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{"batchcomplete":""}');
      }, 600);
    });
    const gw = await spawnGateway(fake.url, { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_LOG_LEVEL: 'warn' });
    const { port, child, exited } = gw;
    const inFlight = Array.from({ length: 20 }, (_, i) => http(`http://127.0.0.1:${port}/w/api.php?action=query&list=filearchive&format=json&n=${i}`));
    // Every request under way at the wiki (not still in the listen backlog) before the signal.
    while (fake.requests.length < 20) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGTERM');
    const answers = await Promise.all(inFlight);
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(await exited).toBe(0);
    expect(gw.stderr()).toBe('');
    // Nothing listens any more.
    await expect(http(`http://127.0.0.1:${port}/w/api.php`)).rejects.toThrow();
  });

  it.runIf(built)('with a drain delay: /readyz is 503 at once, requests are served (Connection: close) until it is over', async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":""}');
    });
    // Long enough that the checks below fit in it on a busy machine.
    const DRAIN_MS = 5_000;
    const gw = await spawnGateway(fake.url, { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_LOG_LEVEL: 'warn', WIKIEDGE_SHUTDOWN_DRAIN_MS: String(DRAIN_MS) });
    const { port, adminPort, child, exited } = gw;
    for (let i = 0; i < 100; i++) {
      if (
        await http(`${gw.adminUrl}/readyz`).then(
          (r) => r.status === 200,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const api = `http://127.0.0.1:${port}/w/api.php?action=query&meta=siteinfo&format=json`;
    expect(header(await http(api), 'connection')).toBe('keep-alive');

    const sigtermAt = Date.now();
    child.kill('SIGTERM');
    // Until the signal is handled.
    let readyz = await http(`http://127.0.0.1:${adminPort}/readyz`);
    while (readyz.status === 200 && Date.now() - sigtermAt < DRAIN_MS / 2) {
      await new Promise((r) => setTimeout(r, 20));
      readyz = await http(`http://127.0.0.1:${adminPort}/readyz`);
    }
    expect(readyz.status).toBe(503);
    expect(JSON.parse(readyz.body)).toEqual({ status: 'unready', reason: 'shutting-down' });
    const during = await http(api);
    expect(during.status).toBe(200);
    expect(header(during, 'connection')).toBe('close');
    expect(Date.now() - sigtermAt).toBeLessThan(DRAIN_MS);

    expect(await exited).toBe(0);
    expect(Date.now() - sigtermAt).toBeGreaterThanOrEqual(DRAIN_MS);
    expect(gw.stderr()).toBe('');
  });
});
