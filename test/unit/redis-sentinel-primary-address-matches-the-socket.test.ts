// Whether the command connection's peer (its socket's remoteAddress: always an IP, IPv4 possibly
// mapped into IPv6) is the primary the Sentinels name (an IP, or a hostname when they announce
// hostnames): src/cache/redis/server-check.ts reachesOneOf, used by connection.ts onThePrimary
// after a down (test: redis-sentinel-stalled-primary-is-not-taken-back.test.ts).
import { describe, expect, it } from 'vitest';
import { reachesOneOf } from '../../src/cache/redis/server-check.js';

const none = () => Promise.reject(new Error('no lookup expected'));

describe('the socket against the primary the Sentinels name', () => {
  it('an IP matches the same IP and port, also mapped into IPv6; another port or IP does not', async () => {
    expect(await reachesOneOf([{ host: '127.0.0.1', port: 7001 }], { host: '127.0.0.1', port: 7001 }, none)).toBe(true);
    expect(await reachesOneOf([{ host: '127.0.0.1', port: 7001 }], { host: '::ffff:127.0.0.1', port: 7001 }, none)).toBe(true);
    expect(await reachesOneOf([{ host: '127.0.0.1', port: 7002 }], { host: '127.0.0.1', port: 7001 }, none)).toBe(false);
    expect(await reachesOneOf([{ host: '10.0.0.2', port: 7001 }], { host: '10.0.0.1', port: 7001 }, none)).toBe(false);
    expect(await reachesOneOf([{ host: 'FE80::1', port: 7001 }], { host: 'fe80::1', port: 7001 }, none)).toBe(true);
  });

  it('IPv6 written another way is the same address (a Sentinel announcing 2001:db8:0:0::1, the socket saying 2001:db8::1)', async () => {
    // Compared as text, every probe after a down found a "stale primary" and the tier never came back.
    expect(await reachesOneOf([{ host: '2001:db8:0:0::1', port: 7001 }], { host: '2001:db8::1', port: 7001 }, none)).toBe(true);
    expect(await reachesOneOf([{ host: '2001:0db8::0001', port: 7001 }], { host: '2001:db8::1', port: 7001 }, none)).toBe(true);
    expect(await reachesOneOf([{ host: '127.0.0.1', port: 7001 }], { host: '::ffff:7f00:1', port: 7001 }, none)).toBe(true);
    expect(await reachesOneOf([{ host: '2001:db8::2', port: 7001 }], { host: '2001:db8::1', port: 7001 }, none)).toBe(false);
  });

  it('any of several (Sentinels at the same epoch that disagree for a moment) is enough', async () => {
    const named = [
      { host: '10.0.0.2', port: 6379 },
      { host: '10.0.0.1', port: 6379 },
    ];
    expect(await reachesOneOf(named, { host: '10.0.0.1', port: 6379 }, none)).toBe(true);
  });

  it('a hostname is resolved: it matches when one of its addresses is the peer', async () => {
    const lookup = (host: string) => Promise.resolve(host === 'redis-b' ? ['10.0.0.2', '10.0.0.3'] : ['10.0.0.9']);
    expect(await reachesOneOf([{ host: 'redis-b', port: 6379 }], { host: '10.0.0.3', port: 6379 }, lookup)).toBe(true);
    expect(await reachesOneOf([{ host: 'redis-a', port: 6379 }], { host: '10.0.0.3', port: 6379 }, lookup)).toBe(false);
    // Without a lookup when the port already differs.
    expect(await reachesOneOf([{ host: 'redis-b', port: 6380 }], { host: '10.0.0.3', port: 6379 }, none)).toBe(false);
  });

  it('a hostname that does not resolve cannot say (the tier keeps its former behaviour)', async () => {
    const lookup = () => Promise.reject(new Error('ENOTFOUND'));
    expect(await reachesOneOf([{ host: 'gone', port: 6379 }], { host: '10.0.0.3', port: 6379 }, lookup)).toBeUndefined();
    // Another name that does match still decides.
    expect(
      await reachesOneOf(
        [
          { host: 'gone', port: 6379 },
          { host: '10.0.0.3', port: 6379 },
        ],
        { host: '10.0.0.3', port: 6379 },
        lookup,
      ),
    ).toBe(true);
  });
});
