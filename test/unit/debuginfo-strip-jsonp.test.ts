/**
 * stripDebuginfo on format=json with `callback=` (src/mediawiki/debuginfo/jsonp.ts): the JSON object inside
 * `/**∕cb(…)`. Fixtures from a throw-away lab wiki (Debian's MediaWiki 1.39.17, lab/setup.sh
 * --debug, no cookies sent), see test/fixtures/debuginfo/README.md; `.on` / `.off` are the same
 * request with $wgDebugToolbar on and off.
 */
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const JSONP_TYPE = 'text/javascript; charset=utf-8';

describe('byte-identical to the same request with the toolbar off (list=filearchive)', () => {
  it.each([['jsonp', JSONP_TYPE, 'jsonp']] as const)('%s', (name, type, format) => {
    const on = fixture(`filearchive-${name}.on.js`);
    const r = stripDebuginfo(on, type);
    expect(r.format).toBe(format);
    expect(r.body.equals(fixture(`filearchive-${name}.off.js`))).toBe(true);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' });
  });
});

describe('siteinfo', () => {
  it('JSONP: /**/cb({...}) keeps its wrapper', () => {
    const r = stripDebuginfo(fixture('siteinfo-jsonp.js'), JSONP_TYPE);
    const s = r.body.toString();
    expect(s.startsWith('/**/cb({"batchcomplete":""')).toBe(true);
    expect(s.endsWith('"nofollowdomainexceptions":["mediawiki.org"]}}})')).toBe(true);
    assertNoLeak(r.body);
    expect(r.format).toBe('jsonp');
  });
});

describe('synthetic shapes', () => {
  it.each([['jsonp', '/**/cb({"debuginfo":{}}']] as const)('broken %s fails closed', (_kind, text) => {
    expect(() => stripDebuginfo(Buffer.from(text), JSONP_TYPE)).toThrow(DebuginfoStripError);
  });
});
