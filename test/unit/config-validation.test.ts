// The configuration is validated once; every error names the key and the rule.
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/config.js';
import { scratchDir } from '../support/scratch.js';

const base = { WIKIEDGE_UPSTREAM: 'http://127.0.0.1:8080' };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('has documented defaults', () => {
    const c = loadConfig(base);
    expect(c).toMatchObject({
      host: '0.0.0.0',
      port: 8080,
      adminHost: '127.0.0.1',
      adminPort: 8081,
      apiPath: '/w/api.php',
      cookiePrefix: 'wiki',
      logLevel: 'info',
      debuginfo: 'strip',
      trustedProxies: ['127.0.0.1', '::1'],
    });
    expect(c.identitySecret.length).toBe(32);
    expect(c.shutdownDrainMs).toBe(0);
    expect(c.workers).toBe(1);
    expect(c.logHits).toBe(1);
  });

  it('listen addresses: an IP literal or a host name, anything else refused naming the key', () => {
    for (const good of ['0.0.0.0', '::', '127.0.0.1', '::1', 'localhost', 'gateway-1.internal', 'gateway.example.', 'my_service']) {
      expect(loadConfig({ ...base, WIKIEDGE_HOST: good }).host).toBe(good);
      expect(loadConfig({ ...base, WIKIEDGE_ADMIN_HOST: good, WIKIEDGE_ADMIN_INSECURE_NO_TOKEN: 'true' }).adminHost).toBe(good);
    }
    // In brackets, as a URL writes it: the address.
    expect(loadConfig({ ...base, WIKIEDGE_HOST: '[::1]' }).host).toBe('::1');
    for (const bad of [' ', 'http://0.0.0.0', '0.0.0.0:8080', '[::1]:8080', '[127.0.0.1]', 'two words', '-leading.dash', 'a..b']) {
      expect(errorOf({ ...base, WIKIEDGE_HOST: bad }).message).toMatch(/^WIKIEDGE_HOST: must be an IP address or a host name/);
      expect(errorOf({ ...base, WIKIEDGE_ADMIN_HOST: bad }).message).toMatch(/^WIKIEDGE_ADMIN_HOST: must be an IP address or a host name/);
    }
  });

  it('a number that is blank is no number (Number(" ") is 0; an empty value is unset, the default)', () => {
    expect(errorOf({ ...base, WIKIEDGE_TTL_JITTER_RATIO: ' ' }).message).toMatch(/^WIKIEDGE_TTL_JITTER_RATIO: must be a number/);
    expect(loadConfig({ ...base, WIKIEDGE_TTL_JITTER_RATIO: '' }).ttlJitterRatio).toBe(loadConfig(base).ttlJitterRatio);
  });

  it('a list in the file holds strings: null, a map or a list in it is refused, not read as text', () => {
    const file = path.join(scratchDir('config-list-items'), 'wikiedge.yaml');
    writeFileSync(file, 'upstream: http://wiki:80\ncredentialCookies: [null]\n');
    expect(errorOf({ WIKIEDGE_CONFIG: file }).message).toMatch(/^WIKIEDGE_CREDENTIAL_COOKIES: must be a list of cookie names, got null in it/);
  });

  it('WIKIEDGE_LOG_HITS: false, true, or the share of hits to log', () => {
    expect(loadConfig({ ...base, WIKIEDGE_LOG_HITS: 'false' }).logHits).toBe(0);
    expect(loadConfig({ ...base, WIKIEDGE_LOG_HITS: 'true' }).logHits).toBe(1);
    expect(loadConfig({ ...base, WIKIEDGE_LOG_HITS: '0.01' }).logHits).toBe(0.01);
    expect(loadConfig({ ...base, WIKIEDGE_LOG_HITS: '1' }).logHits).toBe(1);
    for (const bad of ['1.5', '-0.1', 'some', '1e-2', 'NaN']) {
      expect(() => loadConfig({ ...base, WIKIEDGE_LOG_HITS: bad })).toThrow(/WIKIEDGE_LOG_HITS.*fraction/);
    }
  });

  it('WIKIEDGE_REDIS_URL needs WIKIEDGE_IDENTITY_SECRET: replicas sharing Redis must name sessions alike', () => {
    const redis = { ...base, WIKIEDGE_REDIS_URL: 'redis://127.0.0.1:6390/0' };
    expect(() => loadConfig(redis)).toThrow(/WIKIEDGE_IDENTITY_SECRET: is required with WIKIEDGE_REDIS_URL/);
    expect(loadConfig({ ...redis, WIKIEDGE_IDENTITY_SECRET: 'shared-by-every-replica' }).redisUrl).toBe('redis://127.0.0.1:6390/0');
  });

  it('WIKIEDGE_WORKERS: a count, or auto for one per CPU', () => {
    expect(loadConfig({ ...base, WIKIEDGE_WORKERS: '4' }).workers).toBe(4);
    expect(loadConfig({ ...base, WIKIEDGE_WORKERS: 'auto' }).workers).toBe(availableParallelism());
  });

  it.each([
    [{}, 'WIKIEDGE_UPSTREAM', 'is required'],
    [{ WIKIEDGE_UPSTREAM: 'not a url' }, 'WIKIEDGE_UPSTREAM', 'absolute'],
    [{ WIKIEDGE_UPSTREAM: 'ftp://wiki' }, 'WIKIEDGE_UPSTREAM', 'http'],
    [{ ...base, WIKIEDGE_UPSTREAM: 'http://wiki/w' }, 'WIKIEDGE_UPSTREAM', 'bare origin'],
    [{ ...base, WIKIEDGE_PORT: '70000' }, 'WIKIEDGE_PORT', 'from 0 to 65535'],
    [{ ...base, WIKIEDGE_PORT: 'eighty' }, 'WIKIEDGE_PORT', 'integer'],
    [{ ...base, WIKIEDGE_LOG_LEVEL: 'loud' }, 'WIKIEDGE_LOG_LEVEL', 'one of'],
    [{ ...base, WIKIEDGE_API_PATH: 'w/api.php' }, 'WIKIEDGE_API_PATH', 'normalised absolute path'],
    [{ ...base, WIKIEDGE_COOKIE_PREFIX: 'wiki.x' }, 'WIKIEDGE_COOKIE_PREFIX', 'A-Z'],
    [{ ...base, WIKIEDGE_TRUSTED_PROXIES: '10.0.0.1,example.org' }, 'WIKIEDGE_TRUSTED_PROXIES', 'IP addresses'],
    [{ ...base, WIKIEDGE_IDENTITY_SECRET: 'short' }, 'WIKIEDGE_IDENTITY_SECRET', 'at least 16'],
    [{ ...base, WIKIEDGE_MODULES: '{"query":{"ttl":5}}' }, 'WIKIEDGE_MODULES.query.ttl', 'not a known rule'],
    [{ ...base, WIKIEDGE_TTL_PUBLIC_SECONDS: '7200' }, 'WIKIEDGE_TTL_PUBLIC_SECONDS', 'must not exceed'],
    [{ ...base, WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS: '70000' }, 'WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS', 'must not exceed WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS'],
    [
      { ...base, WIKIEDGE_CACHE_MAX_ENTRY_BYTES: String(300 * 1024 * 1024) },
      'WIKIEDGE_CACHE_MAX_ENTRY_BYTES',
      'must not exceed WIKIEDGE_CACHE_SHARED_MAX_BYTES',
    ],
    [{ ...base, WIKIEDGE_PORTT: '1' }, 'WIKIEDGE_PORTT', 'not a known configuration key'],
    [{ ...base, WIKIEDGE_SHUTDOWN_DRAIN_MS: '-1' }, 'WIKIEDGE_SHUTDOWN_DRAIN_MS', 'integer from 0 to 600000'],
    [{ ...base, WIKIEDGE_SHUTDOWN_DRAIN_MS: '5s' }, 'WIKIEDGE_SHUTDOWN_DRAIN_MS', 'integer from 0 to 600000'],
    [{ ...base, WIKIEDGE_WORKERS: '0' }, 'WIKIEDGE_WORKERS', 'auto or an integer from 1 to 256'],
    [{ ...base, WIKIEDGE_WORKERS: 'all' }, 'WIKIEDGE_WORKERS', 'auto or an integer from 1 to 256'],
    [{ ...base, WIKIEDGE_WORKERS: '1.5' }, 'WIKIEDGE_WORKERS', 'auto or an integer from 1 to 256'],
    [{ ...base, WIKIEDGE_CREDENTIAL_PARAMS: 'centralauthtoken,a[b]' }, 'WIKIEDGE_CREDENTIAL_PARAMS', 'query parameter names'],
  ])('%j → %s', (env, key, rule) => {
    const err = errorOf(env as Record<string, string>);
    expect(err.key).toBe(key);
    expect(err.message).toContain(rule);
  });

  it('reads a YAML file named by WIKIEDGE_CONFIG; the environment overrides it', () => {
    const dir = scratchDir('wikiedge-config-');
    const file = path.join(dir, 'wikiedge.yaml');
    writeFileSync(file, 'upstream: http://wiki:80\nport: 9000\nmodules:\n  wbavailablebadges:\n    ttlSeconds: 120\n');
    const c = loadConfig({ WIKIEDGE_CONFIG: file, WIKIEDGE_PORT: '9001' });
    expect(c.upstream.origin).toBe('http://wiki');
    expect(c.port).toBe(9001);
    expect(c.modules['wbavailablebadges']?.ttlSeconds).toBe(120);
  });

  it('rejects unknown keys in the file', () => {
    const dir = scratchDir('wikiedge-config-');
    const file = path.join(dir, 'wikiedge.json');
    writeFileSync(file, JSON.stringify({ upstream: 'http://wiki', prot: 1 }));
    expect(errorOf({ WIKIEDGE_CONFIG: file }).key).toBe('prot');
  });

  it('is frozen, and the secret is never described', () => {
    const c = loadConfig({ ...base, WIKIEDGE_IDENTITY_SECRET: 'a-very-secret-value-1234' });
    expect(Object.isFrozen(c)).toBe(true);
    expect(() => {
      (c as { port: number }).port = 1;
    }).toThrow();
    expect(JSON.stringify(describeConfig(c))).not.toContain('a-very-secret-value-1234');
  });
});

describe('address lists, secrets from files, the admin token', () => {
  it('WIKIEDGE_TRUSTED_PROXIES and WIKIEDGE_PURGE_ALLOW take addresses and CIDR ranges, separately', () => {
    const c = loadConfig({ ...base, WIKIEDGE_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.0.2.7', WIKIEDGE_PURGE_ALLOW: '172.30.0.0/24' });
    expect(c.trustedProxies).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.7']);
    expect(c.purgeAllow).toEqual(['172.30.0.0/24']);
    expect(loadConfig(base).purgeAllow).toEqual(['127.0.0.1', '::1']);
  });

  it.each(['10.0.0.0/33', 'fd00::/129', 'wiki.example', '10.0.0.0/x', '1.2.3'])('refuses %s, naming the key', (entry) => {
    const err = errorOf({ ...base, WIKIEDGE_PURGE_ALLOW: entry });
    expect(err.key).toBe('WIKIEDGE_PURGE_ALLOW');
    expect(err.message).toContain(entry);
  });

  it('secrets come from <KEY>_FILE (a container secrets mount), final newline dropped', () => {
    const dir = scratchDir('wikiedge-secret-');
    const file = path.join(dir, 'token');
    writeFileSync(file, 'a-token-read-from-a-file-0123\n');
    writeFileSync(path.join(dir, 'secret'), 'identity-secret-from-a-file\n');
    const c = loadConfig({ ...base, WIKIEDGE_ADMIN_TOKEN_FILE: file, WIKIEDGE_IDENTITY_SECRET_FILE: path.join(dir, 'secret') });
    expect(c.adminToken).toBe('a-token-read-from-a-file-0123');
    expect(c.identitySecret.toString()).toBe('identity-secret-from-a-file');
    expect(JSON.stringify(describeConfig(c))).not.toContain('a-token-read-from-a-file');
  });

  it('a secret file that cannot be read, or set beside its variable, is an error naming the _FILE key', () => {
    expect(errorOf({ ...base, WIKIEDGE_ADMIN_TOKEN_FILE: '/nonexistent/token' }).key).toBe('WIKIEDGE_ADMIN_TOKEN_FILE');
    const dir = scratchDir('wikiedge-secret-');
    writeFileSync(path.join(dir, 't'), 'a-token-read-from-a-file-0123');
    expect(errorOf({ ...base, WIKIEDGE_ADMIN_TOKEN_FILE: path.join(dir, 't'), WIKIEDGE_ADMIN_TOKEN: 'another-token-0123456789' }).key).toBe(
      'WIKIEDGE_ADMIN_TOKEN_FILE',
    );
  });

  it('an admin token shorter than 16 characters is refused', () => {
    expect(errorOf({ ...base, WIKIEDGE_ADMIN_TOKEN: 'short' }).key).toBe('WIKIEDGE_ADMIN_TOKEN');
  });
});
