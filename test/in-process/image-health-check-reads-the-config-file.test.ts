// The image's HEALTHCHECK (`node dist/healthcheck.js`, src/apps/healthcheck.ts) checks the admin
// listener the configuration names. It read WIKIEDGE_ADMIN_PORT and WIKIEDGE_ADMIN_HOST from the
// environment alone: a deployment that sets the admin port in its WIKIEDGE_CONFIG file (the
// compose example's way of configuring) had a healthy gateway reported unhealthy, forever.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthzUrl } from '../../src/apps/healthcheck.js';
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
  it('an unspecified listen address is reached on loopback; IPv6 literals in brackets', () => {
    expect(healthzUrl('0.0.0.0', 8081)).toBe('http://127.0.0.1:8081/healthz');
    expect(healthzUrl('::', 9000)).toBe('http://127.0.0.1:9000/healthz');
    expect(healthzUrl('::1', 9000)).toBe('http://[::1]:9000/healthz');
    expect(healthzUrl('10.0.0.5', 81)).toBe('http://10.0.0.5:81/healthz');
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
