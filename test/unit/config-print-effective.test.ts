// `--print-config` (renderEffectiveConfig): every key once, in the environment's spelling, secrets
// redacted, and each value marked with where it came from, the defaults as `# default`.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, loadConfig, loadConfigWithOrigins, renderEffectiveConfig } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:8080' };
const adminToken = 'an-admin-token-0123456789';
const identitySecret = 'an-identity-secret-0123456789';

/** Each printed line as [name, value, note]. */
function printed(env: NodeJS.ProcessEnv): [string, string, string][] {
  return renderEffectiveConfig(loadConfigWithOrigins(env))
    .trimEnd()
    .split('\n')
    .map((line) => {
      const m = /^(WIKIEDGE_[A-Z_]+)=(.*?) * {2}# (.+)$/.exec(line);
      if (!m) throw new Error(`not a printed line: ${line}`);
      return [m[1]!, m[2]!, m[3]!];
    });
}

function line(lines: [string, string, string][], name: string): [string, string] {
  const found = lines.find(([n]) => n === name);
  if (!found) throw new Error(`${name} not printed`);
  return [found[1], found[2]];
}

describe('--print-config', () => {
  it('prints every key once, in the order of the reference', () => {
    expect(printed(base).map(([name]) => name)).toEqual(CONFIG_KEYS);
  });

  it('marks the defaults, and says where every other value came from', () => {
    const dir = scratchDir('wikiedge-print-');
    const file = path.join(dir, 'wikiedge.yaml');
    writeFileSync(file, 'upstream: http://wiki:80\nport: 9000\ngraceSeconds: 30\n');
    writeFileSync(path.join(dir, 'token'), `${adminToken}\n`);
    const lines = printed({ WIKIEDGE_CONFIG: file, WIKIEDGE_PORT: '9001', WIKIEDGE_ADMIN_TOKEN_FILE: path.join(dir, 'token') });
    expect(line(lines, 'WIKIEDGE_PORT')).toEqual(['9001', 'environment']);
    expect(line(lines, 'WIKIEDGE_GRACE_SECONDS')).toEqual(['30', 'WIKIEDGE_CONFIG file']);
    expect(line(lines, 'WIKIEDGE_UPSTREAM')).toEqual(['http://wiki', 'WIKIEDGE_CONFIG file']);
    expect(line(lines, 'WIKIEDGE_ADMIN_TOKEN')).toEqual(['[redacted]', 'WIKIEDGE_ADMIN_TOKEN_FILE']);
    expect(line(lines, 'WIKIEDGE_TTL_MAX_SECONDS')).toEqual(['3600', 'default']);
    expect(line(lines, 'WIKIEDGE_TRUSTED_PROXIES')).toEqual(['127.0.0.1,::1', 'default']);
    expect(line(lines, 'WIKIEDGE_IDENTITY_SECRET')).toEqual(['[redacted]', 'default (random at start)']);
    expect(lines.filter(([, , note]) => note.startsWith('default'))).toHaveLength(CONFIG_KEYS.length - 4);
  });

  it('redacts the secrets and the Redis password; an unset secret stays empty', () => {
    const text = renderEffectiveConfig(
      loadConfigWithOrigins({
        ...base,
        WIKIEDGE_ADMIN_TOKEN: adminToken,
        WIKIEDGE_IDENTITY_SECRET: identitySecret,
        WIKIEDGE_REDIS_URL: 'redis://user:hunter2-password@redis:6379/0',
      }),
    );
    for (const secret of [adminToken, identitySecret, 'hunter2']) expect(text).not.toContain(secret);
    expect(text).toMatch(/^WIKIEDGE_REDIS_URL=redis:\/\/user:REDACTED@redis:6379\/0 /m);
    expect(line(printed(base), 'WIKIEDGE_ADMIN_TOKEN')).toEqual(['', 'default']);
  });

  it('every line but the secrets, fed back as the environment, gives the same configuration', () => {
    const env = {
      ...base,
      WIKIEDGE_CREDENTIAL_COOKIES: 'centralauth_*, ssoToken',
      WIKIEDGE_CREDENTIAL_HEADERS: 'X-SSO-User',
      WIKIEDGE_MODULES: '{"parse":{"pass":true},"wbavailablebadges":{"ttlSeconds":600}}',
      WIKIEDGE_LOG_HITS: '0.25',
      WIKIEDGE_WORKERS: '3',
      WIKIEDGE_IDENTITY_SECRET: identitySecret,
    };
    const reprinted = Object.fromEntries(
      printed(env)
        .filter(([name]) => name !== 'WIKIEDGE_IDENTITY_SECRET' && name !== 'WIKIEDGE_ADMIN_TOKEN')
        .map(([name, value]) => [name, value]),
    );
    const again = loadConfig({ ...reprinted, WIKIEDGE_IDENTITY_SECRET: identitySecret });
    const first = loadConfig(env);
    expect({ ...again, upstream: again.upstream.href }).toEqual({ ...first, upstream: first.upstream.href });
  });
});
