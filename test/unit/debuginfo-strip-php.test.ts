/**
 * stripDebuginfo on format=php (src/mediawiki/debuginfo/php.ts): the top-level pair `s:9:"debuginfo";a:N:{…}`
 * of serialize(). Fixtures from a throw-away lab wiki (Debian's MediaWiki 1.39.17, lab/setup.sh
 * --debug, no cookies sent), see test/fixtures/debuginfo/README.md; `.on` / `.off` are the same
 * request with $wgDebugToolbar on and off.
 */
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const PHP_TYPE = 'application/vnd.php.serialized; charset=utf-8';

describe('byte-identical to the same request with the toolbar off (list=filearchive)', () => {
  it.each([['php', PHP_TYPE, 'php']] as const)('%s', (name, type, format) => {
    const on = fixture(`filearchive-${name}.on.php.txt`);
    const r = stripDebuginfo(on, type);
    expect(r.format).toBe(format);
    expect(r.body.equals(fixture(`filearchive-${name}.off.php.txt`))).toBe(true);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' });
  });
});

describe('siteinfo', () => {
  it('php: the pair goes and the top-level count drops from 3 to 2', () => {
    const on = fixture('siteinfo.php.txt');
    expect(on.subarray(0, 5).toString()).toBe('a:3:{');
    const r = stripDebuginfo(on, PHP_TYPE);
    const s = r.body.toString();
    expect(s.startsWith('a:2:{s:13:"batchcomplete";s:0:"";s:5:"query";a:1:{')).toBe(true);
    assertNoLeak(r.body);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', time: expect.any(Number) });
    expect((r.debuginfo!['includes'] as unknown[]).length).toBeGreaterThan(900);
  });
});

describe('synthetic shapes', () => {
  it('php: a "debuginfo" string value and a nested key are left alone', () => {
    const input = 'a:2:{s:1:"a";s:9:"debuginfo";s:1:"b";a:1:{s:9:"debuginfo";i:1;}}';
    expect(stripDebuginfo(Buffer.from(input), PHP_TYPE).body.toString()).toBe(input);
  });

  it('php: string lengths are bytes, so multi-byte text is skipped correctly', () => {
    const input = 'a:2:{s:1:"t";s:10:"ü"debuginfo";s:9:"debuginfo";a:1:{s:4:"time";d:0.5;}}'.replace('s:10:"ü"debuginfo"', 's:12:"ü"debuginfo"');
    const r = stripDebuginfo(Buffer.from(input), PHP_TYPE);
    expect(r.body.toString()).toBe('a:1:{s:1:"t";s:12:"ü"debuginfo";}');
    expect(r.debuginfo).toEqual({ time: 0.5 });
  });

  it.each([['php', 'a:1:{s:9:"debuginfo";a:1:{s:4:"time";d:0.5;}']] as const)('broken %s fails closed', (_kind, text) => {
    expect(() => stripDebuginfo(Buffer.from(text), PHP_TYPE)).toThrow(DebuginfoStripError);
  });
});
