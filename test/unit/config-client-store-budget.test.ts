// WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND is validated once, its errors naming the key; `auto`
// (the default) is derived from the shared tier's size (limits/client-budget.ts storeBudgetOptions).
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { sessionStoreBudgetOptions, storeBudgetOptions } from '../../src/limits/client-budget.js';

const base = { WIKIEDGE_UPSTREAM: 'http://127.0.0.1:8080' };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ ...base, ...env });
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND', () => {
  it('defaults to auto: a 600th of the shared tier a second, a burst of four of the largest entries', () => {
    const c = loadConfig(base);
    expect(c.clientStoreBytesPerSecond).toBe('auto');
    expect(storeBudgetOptions(c)).toEqual({ bytesPerSecond: Math.floor((256 * 2 ** 20) / 600), burstBytes: 4 * 2 ** 20, maxClients: 100_000 });
  });

  it('auto follows the shared tier; the burst is never more than an eighth of it', () => {
    const c = loadConfig({ ...base, WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(2 * 2 ** 20) });
    expect(storeBudgetOptions(c)).toMatchObject({ bytesPerSecond: Math.floor((2 * 2 ** 20) / 600), burstBytes: 2 ** 18 });
  });

  it('the session tier`s by the same rule over its size, an address`s unknown sessions together as one client', () => {
    expect(sessionStoreBudgetOptions(loadConfig(base))).toEqual({
      bytesPerSecond: Math.floor((64 * 2 ** 20) / 600),
      burstBytes: 4 * 2 ** 20,
      maxClients: 100_000,
      groups: true,
    });
  });

  it('takes a number of bytes per second, and 0 (off)', () => {
    expect(loadConfig({ ...base, WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '1048576' }).clientStoreBytesPerSecond).toBe(1_048_576);
    expect(storeBudgetOptions(loadConfig({ ...base, WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0' })).bytesPerSecond).toBe(0);
    expect(loadConfig({ ...base, WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: ' auto ' }).clientStoreBytesPerSecond).toBe('auto');
  });

  it.each(['-1', '1.5', 'fast', 'AUTO', String(2 ** 41)])('refuses %s, naming the key', (value) => {
    const err = errorOf({ WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: value });
    expect(err.key).toBe('WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND');
    expect(err.message).toMatch(/^WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: must be auto or an integer from 0 to \d+, got /);
  });
});
