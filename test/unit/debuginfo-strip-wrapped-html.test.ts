/**
 * stripDebuginfo on `wrappedhtml=1` (src/mediawiki/debuginfo/wrapped-html.ts): the HTML rendering inside the
 * JSON string "html", decoded, stripped and re-encoded as PHP would. Fixtures from a throw-away lab
 * wiki (Debian's MediaWiki 1.39.17, lab/setup.sh --debug, no cookies sent), see
 * test/fixtures/debuginfo/README.md; `.on` / `.off` are the same request with $wgDebugToolbar on and off.
 */
import { describe, expect, it } from 'vitest';
import { stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak, normalisePageView as normalise } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const WRAPPED_TYPE = 'text/mediawiki-api-prettyprint-wrapped; charset=utf-8';

describe('HTML pages: identical to the toolbar-off page but for request id and timing', () => {
  it.each([['wrapped', 'txt', WRAPPED_TYPE]] as const)('%s', (name, ext, type) => {
    const on = fixture(`filearchive-${name}.on.${ext}`);
    const r = stripDebuginfo(on, type);
    assertNoLeak(r.body);
    expect(normalise(r.body.toString('utf8'))).toBe(normalise(fixture(`filearchive-${name}.off.${ext}`).toString('utf8')));
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17' });
  });
});

describe('unicode (titles=Zürich<U+2028>日本)', () => {
  it('wrappedhtml: the JSON string "html" is decoded, stripped and re-encoded as PHP would', () => {
    const r = stripDebuginfo(fixture('unicode-jsonfm-wrapped.txt'), WRAPPED_TYPE);
    const s = r.body.toString();
    assertNoLeak(r.body);
    const parsed = JSON.parse(s) as { html: string; status: number };
    expect(parsed.status).toBe(200);
    expect(parsed.html).toContain('"from": "Z\\u00fcrich\\u2028\\u65e5\\u672c"');
    expect(parsed.html.endsWith('}</pre>')).toBe(true);
  });
});
