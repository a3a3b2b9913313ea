// The image's HEALTHCHECK (`node dist/healthcheck.js`, src/apps/healthcheck.ts) checks the admin
// listener the configuration names. It read WIKIEDGE_ADMIN_PORT and WIKIEDGE_ADMIN_HOST from the
// environment alone: a deployment that sets the admin port in its WIKIEDGE_CONFIG file (the
// compose example's way of configuring) had a healthy gateway reported unhealthy, forever.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminAddress, reachableHost } from '../../src/apps/healthcheck.js';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { scratchDir } from '../support/scratch.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const healthcheckJs = path.resolve(import.meta.dirname, '../../dist/healthcheck.js');

/** The health check's exit code, run as the container runs it, with only this environment. */
function check(env: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    execFile(process.execPath, [healthcheckJs], { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 20_000 }, (err) =>
      resolve(err ? (typeof err.code === 'number' ? err.code : -1) : 0),
    );
  });
}

describe('the health check`s address', () => {
  const dir = scratchDir('wikiedge-healthcheck-address-');
  const file = (name: string, text: string) => {
    writeFileSync(path.join(dir, name), text);
    return path.join(dir, name);
  };

  it('the file`s, unless the environment sets it; the defaults else', () => {
    const config = file('a.yaml', 'adminPort: 9181\nadminHost: 10.0.0.5\n');
    expect(adminAddress({ WIKIEDGE_CONFIG: config })).toEqual({ host: '10.0.0.5', port: 9181 });
    expect(adminAddress({ WIKIEDGE_CONFIG: config, WIKIEDGE_ADMIN_PORT: '9999' })).toEqual({ host: '10.0.0.5', port: 9999 });
    // Empty is unset, as for the gateway (config/field.ts isUnset).
    expect(adminAddress({ WIKIEDGE_CONFIG: config, WIKIEDGE_ADMIN_PORT: '', WIKIEDGE_ADMIN_HOST: '' })).toEqual({ host: '10.0.0.5', port: 9181 });
    expect(adminAddress({})).toEqual({ host: '127.0.0.1', port: 8081 });
  });

  it('a file that no longer validates (an unknown key, a bad value elsewhere) still gives its admin address', () => {
    const config = file('b.yaml', 'adminPort: 9182\nmaxUrlBytes: -5\nnotAKey: 1\n');
    expect(adminAddress({ WIKIEDGE_CONFIG: config, WIKIEDGE_ADMIN_TOKEN_FILE: '/nonexistent/token' })).toEqual({ host: '127.0.0.1', port: 9182 });
  });

  it('a file that cannot be read or parsed: the environment and the defaults', () => {
    expect(adminAddress({ WIKIEDGE_CONFIG: file('c.yaml', 'adminPort: [\n'), WIKIEDGE_ADMIN_PORT: '9183' }).port).toBe(9183);
    expect(adminAddress({ WIKIEDGE_CONFIG: path.join(dir, 'missing.yaml') }).port).toBe(8081);
  });

  it('each value through the key`s own parser: a bracketed IPv6 literal, spaces trimmed', () => {
    expect(adminAddress({ WIKIEDGE_ADMIN_HOST: '[::1]', WIKIEDGE_ADMIN_PORT: ' 9184 ' })).toEqual({ host: '::1', port: 9184 });
    expect(adminAddress({ WIKIEDGE_ADMIN_HOST: ' admin.internal ' }).host).toBe('admin.internal');
  });

  it('an unspecified listen address is reached on loopback, however written; any other as it is', () => {
    for (const host of ['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']) expect(reachableHost(host), host).toBe('127.0.0.1');
    for (const host of ['::1', '10.0.0.5', 'fe80::1%eth0', 'admin.internal']) expect(reachableHost(host), host).toBe(host);
  });
});

describe.runIf(built)('the image`s health check', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let dir: string;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => res.end('{}'));
    gw = await spawnGateway(fake.url);
    dir = scratchDir('wikiedge-healthcheck-');
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  const file = (name: string, yaml: string) => {
    writeFileSync(path.join(dir, name), yaml);
    return path.join(dir, name);
  };

  it('healthy when the WIKIEDGE_CONFIG file names the admin port, and the environment does not', async () => {
    const config = file('good.yaml', `adminPort: ${gw.adminPort}\nadminHost: 0.0.0.0\n`);
    expect(await check({ WIKIEDGE_UPSTREAM: fake.url, WIKIEDGE_CONFIG: config })).toBe(0);
  });

  it('the environment wins over the file, as for the gateway', async () => {
    const config = file('shadowed.yaml', `adminPort: ${await closedPort()}\n`);
    expect(await check({ WIKIEDGE_UPSTREAM: fake.url, WIKIEDGE_CONFIG: config, WIKIEDGE_ADMIN_PORT: String(gw.adminPort) })).toBe(0);
  });

  it('unhealthy when nothing answers where the configuration says', async () => {
    const config = file('closed.yaml', `adminPort: ${await closedPort()}\n`);
    expect(await check({ WIKIEDGE_UPSTREAM: fake.url, WIKIEDGE_CONFIG: config })).toBe(1);
  });

  it('a file edited into an invalid configuration (the running gateway keeps its own): its admin port is still the one checked', async () => {
    const config = file('invalid.yaml', `adminPort: ${gw.adminPort}\nmaxUrlBytes: -5\n`);
    expect(await check({ WIKIEDGE_UPSTREAM: fake.url, WIKIEDGE_CONFIG: config })).toBe(0);
  });
});
