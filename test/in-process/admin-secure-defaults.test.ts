// Operations, round 2: secure defaults of the admin listener. On an address other than loopback
// it takes POST /purge from whoever reaches it, so it needs WIKIEDGE_ADMIN_TOKEN(_FILE) there
// unless the operator names the risk (WIKIEDGE_ADMIN_INSECURE_NO_TOKEN); /metrics can need a
// token of its own (WIKIEDGE_METRICS_TOKEN), which Prometheus sends with its `authorization` block.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { isLoopbackHost } from '../../src/config/load.js';
import { answerPrivateEmptyJson, gatewayOnFake } from '../support/gateway-on-fake.js';
import { runCli } from '../support/cli.js';
import { http } from '../support/http.js';
import { built } from '../support/spawned.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki.invalid:80' };
const TOKEN = 'admin-token-for-the-tests-0123456789';
const METRICS_TOKEN = 'metrics-token-for-the-tests-012345';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('an admin listener off loopback', () => {
  it('an admin listener on 0.0.0.0 without a token refuses to start', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.7', 'admin.example']) {
      const err = configError({ ...base, WIKIEDGE_ADMIN_HOST: host });
      expect(err.key).toBe('WIKIEDGE_ADMIN_TOKEN');
      expect(err.message).toMatch(/WIKIEDGE_ADMIN_TOKEN: is required when WIKIEDGE_ADMIN_HOST .* is not a loopback address/);
      expect(err.message).toContain('WIKIEDGE_ADMIN_INSECURE_NO_TOKEN=true');
    }
  });

  it.runIf(built)('--check fails the same way, exit 2, naming the key', () => {
    const run = runCli(['--check'], { ...base, WIKIEDGE_ADMIN_HOST: '0.0.0.0' });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^wikiedge: invalid configuration: WIKIEDGE_ADMIN_TOKEN: is required when WIKIEDGE_ADMIN_HOST \(0\.0\.0\.0\)/);
  });

  it('starts with a token, or with the risk named', () => {
    expect(loadConfig({ ...base, WIKIEDGE_ADMIN_HOST: '0.0.0.0', WIKIEDGE_ADMIN_TOKEN: TOKEN }).adminToken).toBe(TOKEN);
    expect(loadConfig({ ...base, WIKIEDGE_ADMIN_HOST: '0.0.0.0', WIKIEDGE_ADMIN_INSECURE_NO_TOKEN: 'true' }).adminInsecureNoToken).toBe(true);
  });

  it('needs nothing on loopback', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(host), host).toBe(true);
      // An address in brackets is the address (what the listener can bind: config/parsers.ts listenHost).
      expect(loadConfig({ ...base, WIKIEDGE_ADMIN_HOST: host }).adminHost).toBe(host.replace(/^\[(.*)\]$/, '$1'));
    }
    for (const host of ['0.0.0.0', '::', '128.0.0.1', 'localhost.example', '::2']) expect(isLoopbackHost(host), host).toBe(false);
  });
});

describe('WIKIEDGE_METRICS_TOKEN', () => {
  const pair = gatewayOnFake(answerPrivateEmptyJson, { WIKIEDGE_METRICS_TOKEN: METRICS_TOKEN });

  it('GET /metrics needs the bearer token; /healthz does not', async () => {
    const none = await http(`${pair.gw.adminUrl}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="wikiedge-metrics"');
    expect(none.body).not.toContain('wikiedge_requests_total');
    expect((await http(`${pair.gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    const good = await http(`${pair.gw.adminUrl}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(good.status).toBe(200);
    expect(good.body).toContain('wikiedge_build_info');
    expect((await http(`${pair.gw.adminUrl}/healthz`)).status).toBe(200);
  });
});
