// What Varnish's exporter gives beside the cache figures: client connections (open now and
// accepted), connections to the backend (busy and idle, from undici's pool), and which build
// runs (version, commit, Node.js version), as wikiedge_build_info{...} 1.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInfo } from '../../src/observe/build-info.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { repoRoot } from '../support/promql.js';

async function metric(gw: RunningGateway, series: string): Promise<number> {
  const body = (await http(`${gw.adminUrl}/metrics`)).body;
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.split(' ').pop());
}

async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await check()); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('connections and build metrics', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, max-age=0' });
      res.end('{}');
    });
    gw = await startGateway(fake.url);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('counts client connections: accepted, and open while they are', async () => {
    const accepted = await metric(gw, 'wikiedge_client_connections_accepted_total');
    const open = await metric(gw, 'wikiedge_client_connections');
    const { hostname, port } = new URL(gw.url);
    const sockets = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect({ host: hostname, port: Number(port) }, () => resolve(s));
            // A reset while the gateway closes must not become an uncaught error (it fails the run).
            s.on('error', () => undefined);
          }),
      ),
    );
    await until(async () => (await metric(gw, 'wikiedge_client_connections')) === open + 3);
    expect(await metric(gw, 'wikiedge_client_connections')).toBe(open + 3);
    expect((await metric(gw, 'wikiedge_client_connections_accepted_total')) - accepted).toBe(3);
    for (const s of sockets) s.destroy();
    await until(async () => (await metric(gw, 'wikiedge_client_connections')) === open);
    expect(await metric(gw, 'wikiedge_client_connections')).toBe(open);
    expect((await metric(gw, 'wikiedge_client_connections_accepted_total')) - accepted).toBe(3);
  });

  it('reads the connections to the wiki from the pool: idle once an answer is in', async () => {
    expect((await http(`${gw.apiUrl}?action=query&meta=userinfo&format=json`)).status).toBe(200);
    await until(async () => (await metric(gw, 'wikiedge_upstream_connections{state="idle"}')) >= 1);
    expect(await metric(gw, 'wikiedge_upstream_connections{state="idle"}')).toBeGreaterThanOrEqual(1);
    expect(await metric(gw, 'wikiedge_upstream_connections{state="busy"}')).toBe(0);
    expect(fake.openSockets()).toBeGreaterThanOrEqual(1);
  });

  it('says which build runs: the package version, a commit, the Node.js version', async () => {
    const body = (await http(`${gw.adminUrl}/metrics`)).body;
    const m = /^wikiedge_build_info\{version="([^"]*)",commit="([^"]*)",node_version="([^"]*)"\} 1$/m.exec(body);
    expect(m).not.toBeNull();
    const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(m![1]).toBe(pkg.version);
    expect(m![2]).toMatch(/^([0-9a-f]{7,40}|unknown)$/);
    expect(m![3]).toBe(process.version);
  });

  it('takes the commit from SOURCE_COMMIT, and never an arbitrary string as a label', () => {
    expect(buildInfo({ SOURCE_COMMIT: '0123456789ABCDEF0123456789abcdef01234567' }).commit).toBe('0123456789abcdef0123456789abcdef01234567');
    expect(buildInfo({ SOURCE_COMMIT: 'not a commit"}' }).commit).toMatch(/^([0-9a-f]{7,40}|unknown)$/);
  });

  it('finds package.json and the build`s commit from where the compiled file sits (dist/observe/)', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const compiled = (await import(new URL('../../dist/observe/build-info.js', import.meta.url).href)) as typeof import('../../src/observe/build-info.js');
    const info = compiled.buildInfo({});
    expect(info.version).toBe(pkg.version);
    const written = JSON.parse(await readFile(new URL('../../dist/build-info.json', import.meta.url), 'utf8')) as { commit: string };
    expect(info.commit).toBe(written.commit === 'unknown' ? 'unknown' : written.commit.toLowerCase());
  });
});
