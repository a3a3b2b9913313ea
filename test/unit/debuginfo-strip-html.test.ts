/**
 * stripDebuginfo on the HTML renderings, jsonfm/xmlfm/phpfm/rawfm and action=help
 * (src/mediawiki/debuginfo/html.ts): the block HTML-escaped in `<pre class="api-pretty-content">` and the
 * toolbar's copy `mw.config.set({"debugInfo":…})`. Fixtures from a throw-away lab wiki (Debian's
 * MediaWiki 1.39.17, lab/setup.sh --debug, no cookies sent), see test/fixtures/debuginfo/README.md;
 * `.on` / `.off` are the same request with $wgDebugToolbar on and off.
 */
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak, normalisePageView as normalise } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const HTML_TYPE = 'text/html; charset=UTF-8';

describe('HTML pages: identical to the toolbar-off page but for request id and timing', () => {
  it.each([
    ['jsonfm', 'html', HTML_TYPE],
    ['xmlfm', 'html', HTML_TYPE],
    ['phpfm', 'html', HTML_TYPE],
    ['rawfm', 'html', HTML_TYPE],
    ['help', 'html', HTML_TYPE],
  ] as const)('%s', (name, ext, type) => {
    const on = fixture(`filearchive-${name}.on.${ext}`);
    const r = stripDebuginfo(on, type);
    assertNoLeak(r.body);
    expect(normalise(r.body.toString('utf8'))).toBe(normalise(fixture(`filearchive-${name}.off.${ext}`).toString('utf8')));
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17' });
  });
});

describe('siteinfo', () => {
  it('jsonfm: both copies go, the <pre> block and the toolbar mw.config.set({"debugInfo":…})', () => {
    const on = fixture('siteinfo-jsonfm.html');
    // the page really holds two copies, each with the request-header dump
    expect(on.toString().match(/HTTP HEADERS/g)).toHaveLength(2);
    const r = stripDebuginfo(on, HTML_TYPE);
    assertNoLeak(r.body);
    const s = r.body.toString();
    expect(s).toContain('<pre class="api-pretty-content">{\n    "batchcomplete": "",\n');
    expect(s).toContain('            "nofollowdomainexceptions": [\n                "mediawiki.org"\n            ]\n        }\n    }\n}</pre>');
    expect(s).not.toContain('"mediawiki.debug"');
    expect(r.debuginfo!['queries']).toEqual(expect.any(Array));
  });

  it('jsonfm with callback= and with ResourceLoader debug=1 (pretty toolbar JSON)', () => {
    for (const name of ['siteinfo-jsonfm-callback.html', 'siteinfo-jsonfm-rldebug.html']) {
      const r = stripDebuginfo(fixture(name), HTML_TYPE);
      assertNoLeak(r.body);
      expect(r.format).toBe('html');
    }
  });
});

describe('synthetic shapes', () => {
  it('html <pre> content that does not round-trip through Html::element() escaping fails closed', () => {
    const input = '<html><pre class="api-pretty-content">{"debuginfo": &quot;x&quot;}</pre></html>';
    expect(() => stripDebuginfo(Buffer.from(input), HTML_TYPE)).toThrow(DebuginfoStripError);
  });

  it('an API pretty page without the plain <pre> (a highlighter hook) fails closed', () => {
    const input = '<html><div class="api-pretty-header">x</div><div class="mw-highlight"><span>"debuginfo"</span></div></html>';
    expect(() => stripDebuginfo(Buffer.from(input), HTML_TYPE)).toThrow(DebuginfoStripError);
  });
});
