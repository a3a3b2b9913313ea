// `--print-config` prints the effective configuration (every key, secrets redacted, where each
// value came from) and exits 0 without listening, like `nginx -T`; an invalid one exits 2.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/config.js';
import { offlineGatewayEnv, runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('--print-config', () => {
  const env = offlineGatewayEnv();

  it('prints every key with its origin, the secrets redacted, and exits 0', () => {
    const dir = scratchDir('wikiedge-print-');
    writeFileSync(path.join(dir, 'token'), 'an-admin-token-0123456789\n');
    const run = runCli(['--print-config'], {
      ...env,
      WIKIEDGE_ADMIN_TOKEN_FILE: path.join(dir, 'token'),
      WIKIEDGE_REDIS_URL: 'redis://user:hunter2-password@redis:6379/0',
      WIKIEDGE_IDENTITY_SECRET: 'an-identity-secret-0123456',
    });
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.slice(0, l.indexOf('=')))).toEqual(CONFIG_KEYS);
    expect(run.stdout).not.toContain('an-admin-token');
    expect(run.stdout).not.toContain('hunter2');
    expect(lines).toContainEqual(expect.stringMatching(/^WIKIEDGE_ADMIN_TOKEN=\[redacted\] +# WIKIEDGE_ADMIN_TOKEN_FILE$/));
    expect(lines).toContainEqual(expect.stringMatching(/^WIKIEDGE_PORT=\d+ +# environment$/));
    expect(lines).toContainEqual(expect.stringMatching(/^WIKIEDGE_GRACE_SECONDS=10 +# default$/));
  });

  it('exits 2 naming the key when the configuration is invalid', () => {
    const run = runCli(['--print-config'], { ...env, WIKIEDGE_WORKERS: 'many' });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^wikiedge: invalid configuration: WIKIEDGE_WORKERS: must be auto or an integer/);
  });
});
