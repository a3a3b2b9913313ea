// The wiki resetting mid-body, answering garbage, or a huge body: a MediaWiki-shaped error or the
// body streamed through, never a crash, a hang, or a stored half-answer.
import { afterEach, describe, expect, it } from 'vitest';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('a misbehaving wiki', { timeout: 20_000 }, () => {
  let gw: RunningGateway | undefined;
  let fake: FakeUpstream | undefined;
  let server: net.Server | undefined;
  let cleanup: (() => void) | undefined;
  afterEach(async () => {
    cleanup?.();
    await gw?.close();
    await fake?.close();
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    gw = fake = server = undefined;
  });

  it('reset mid-body: 502, nothing stored', async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public', 'content-length': '1000' });
      res.write('{"batchcomplete":"","query":{');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    gw = await startGateway(fake.url);
    const res = await http(`${gw.apiUrl}?action=query&format=json`);
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body).error.code).toMatch(/^wikiedge-upstream-/);
    expect(gw.built.gateway.store.stats('shared').entries).toBe(0);
  });

  it('garbage instead of HTTP: 502 in MediaWiki’s shape', async () => {
    const sockets = new Set<net.Socket>();
    server = net.createServer((s) => {
      sockets.add(s);
      s.end('this is not http\r\n\r\n');
    });
    // The garbage server's half-closed sockets would keep server.close() waiting.
    cleanup = () => sockets.forEach((s) => s.destroy());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    gw = await startGateway(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const res = await http(`${gw.apiUrl}?action=query&format=json&formatversion=2`);
    expect(res.status).toBe(502);
    expect(JSON.parse(res.body).error.docref).toBeTypeOf('string');
    expect(JSON.parse(res.body).error.code).toBe('wikiedge-upstream-bad-response');
  });

  it('a body larger than the entry cap is delivered whole and not stored', async () => {
    const big = `{"x":"${'a'.repeat(3 * 1024 * 1024)}"}`;
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end(big);
    });
    gw = await startGateway(fake.url);
    const first = await http(`${gw.apiUrl}?action=query&format=json`);
    expect(first.body.length).toBe(big.length);
    const second = await http(`${gw.apiUrl}?action=query&format=json`);
    expect(header(second, 'x-cache')).not.toBe('hit');
    expect(gw.built.gateway.store.stats('shared').entries).toBe(0);
  });
});
