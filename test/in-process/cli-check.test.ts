// `--check` validates the configuration and exits, like `nginx -t`: "configuration OK" and 0, or
// the error naming the key and 2; it never listens (its ports are held by this test) nor asks
// the wiki (which does not exist).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { offlineGatewayEnv, runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('--check', () => {
  const env = offlineGatewayEnv();

  it('says OK and exits 0 for a valid configuration, without listening', () => {
    const run = runCli(['--check'], env);
    expect(run).toMatchObject({ status: 0, stdout: 'wikiedge: configuration OK\n', stderr: '' });
  });

  it('connects to nothing for a Redis Cluster either (its seed nodes need not exist), and wants the shared identity secret', () => {
    // Ports 1 and 2 on loopback: nothing listens there; a connection attempt would only fail later.
    const run = runCli(['--check'], { ...env, WIKIEDGE_REDIS_CLUSTER_NODES: '127.0.0.1:1,127.0.0.1:2', WIKIEDGE_REDIS_TLS: 'true' });
    expect(run).toMatchObject({ status: 2, stdout: '' });
    expect(run.stderr).toMatch(/^wikiedge: invalid configuration: WIKIEDGE_IDENTITY_SECRET: is required with WIKIEDGE_REDIS_CLUSTER_NODES: /);
    const secret = { WIKIEDGE_IDENTITY_SECRET: 'cluster-replicas-share-this-identity-secret' };
    expect(runCli(['--check'], { ...env, ...secret, WIKIEDGE_REDIS_CLUSTER_NODES: '127.0.0.1:1,127.0.0.1:2', WIKIEDGE_REDIS_TLS: 'true' })).toMatchObject({
      status: 0,
      stdout: 'wikiedge: configuration OK\n',
      stderr: '',
    });
  });

  it('names the key and the rule, and exits 2, for an invalid one', () => {
    const run = runCli(['--check'], { ...env, WIKIEDGE_TTL_MAX_SECONDS: 'forever' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('wikiedge: invalid configuration: WIKIEDGE_TTL_MAX_SECONDS: must be an integer from 1 to 604800, got "forever"\n');
  });

  it('says where JSON breaks', () => {
    const run = runCli(['--check'], { ...env, WIKIEDGE_MODULES: '{"parse": {"pass": true,}}' });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('WIKIEDGE_MODULES: must be a JSON object of module name to rule: not valid JSON at line 1, column 25');
  });

  it('checks the WIKIEDGE_CONFIG file too, and a key missing from everywhere', () => {
    const file = path.join(scratchDir('wikiedge-check-'), 'wikiedge.yaml');
    writeFileSync(file, 'graceSeconds: -1\n');
    expect(runCli(['--check'], { ...env, WIKIEDGE_CONFIG: file }).stderr).toContain('WIKIEDGE_GRACE_SECONDS: must be an integer from 0 to 86400');
    const { WIKIEDGE_UPSTREAM: _, ...withoutUpstream } = env;
    expect(runCli(['--check'], withoutUpstream)).toMatchObject({ status: 2, stderr: 'wikiedge: invalid configuration: WIKIEDGE_UPSTREAM: is required\n' });
  });

  it('prints a renamed key’s warning on stderr and still says OK', () => {
    const run = runCli(['--check'], { ...env, WIKIEDGE_READY_TIMEOUT_MS: '1000' });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('wikiedge: warning: WIKIEDGE_READY_TIMEOUT_MS is now called WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: rename it\n');
  });
});
