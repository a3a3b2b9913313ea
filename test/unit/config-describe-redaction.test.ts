// The configuration logged at start (describeConfig): every key, secrets redacted, the upstream
// as its origin and the Redis URL without its password.
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, describeConfig, loadConfig } from '../../src/config/config.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:8080' };

describe('the logged configuration', () => {
  it('has every key', () => {
    expect(Object.keys(describeConfig(loadConfig(base)))).toHaveLength(CONFIG_KEYS.length);
  });

  it('redacts the secrets; an admin token that is not set is logged as empty', () => {
    const set = describeConfig(loadConfig({ ...base, WIKIEDGE_ADMIN_TOKEN: 'an-admin-token-0123456789', WIKIEDGE_IDENTITY_SECRET: 'an-identity-secret-0123' }));
    expect(set).toMatchObject({ adminToken: '[redacted]', identitySecret: '[redacted]' });
    expect(describeConfig(loadConfig(base))).toMatchObject({ adminToken: '', identitySecret: '[redacted]' });
  });

  it('logs the upstream as its origin and the Redis URL without its password', () => {
    const d = describeConfig(
      loadConfig({ ...base, WIKIEDGE_REDIS_URL: 'redis://user:hunter2@redis:6379/1', WIKIEDGE_IDENTITY_SECRET: 'an-identity-secret-0123' }),
    );
    expect(d['upstream']).toBe('http://wiki:8080');
    expect(d['redisUrl']).toBe('redis://user:REDACTED@redis:6379/1');
  });

  it('logs the other values as they are', () => {
    const c = loadConfig({ ...base, WIKIEDGE_MODULES: '{"parse":{"pass":true}}', WIKIEDGE_TRUSTED_PROXIES: '10.0.0.0/8' });
    expect(describeConfig(c)).toMatchObject({ port: 8080, modules: c.modules, trustedProxies: ['10.0.0.0/8'] });
  });
});
