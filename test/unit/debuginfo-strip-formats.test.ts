/**
 * stripDebuginfo on every other printer of MediaWiki 1.39 core. Fixtures were fetched from a
 * throw-away lab wiki (Debian's MediaWiki 1.39.17, lab/setup.sh --debug, no cookies sent), see
 * test/fixtures/debuginfo/README.md. `filearchive-X.on` / `filearchive-X.off` are the same request
 * with $wgDebugToolbar on and off, so the stripped answer can be compared with what MediaWiki sends
 * without the toolbar.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/debuginfo/strip.js';

function fixture(name: string): Buffer {
  return gunzipSync(readFileSync(new URL(`../fixtures/debuginfo/${name}.gz`, import.meta.url)));
}

const TYPES = {
  json: 'application/json; charset=utf-8',
  jsonp: 'text/javascript; charset=utf-8',
  xml: 'text/xml; charset=utf-8',
  rsd: 'application/rsd+xml; charset=utf-8',
  php: 'application/vnd.php.serialized; charset=utf-8',
  html: 'text/html; charset=UTF-8',
  wrapped: 'text/mediawiki-api-prettyprint-wrapped; charset=utf-8',
};

function assertNoLeak(body: Buffer) {
  expect(body.toString('utf8')).not.toMatch(/debug[iI]nfo|HTTP HEADERS|SELECT |MWDebug output/);
}

/** Per-request values that differ between any two page views. */
function normalise(s: string): string {
  return s
    .replace(/"wgRequestId":"[0-9a-f]+"/g, '"wgRequestId":"X"')
    .replace(/"wgBackendResponseTime":[0-9]+/g, '"wgBackendResponseTime":0')
    .replace(/"time":[0-9]+\}$/, '"time":0}');
}

describe('byte-identical to the same request with the toolbar off (list=filearchive)', () => {
  it.each([
    ['json', TYPES.json, 'json'],
    ['jsonp', TYPES.jsonp, 'jsonp'],
    ['xml', TYPES.xml, 'xml'],
    ['php', TYPES.php, 'php'],
    ['rsd', TYPES.rsd, 'xml'],
  ] as const)('%s', (name, type, format) => {
    const ext = { json: 'json', jsonp: 'js', xml: 'xml', php: 'php.txt', rsd: 'xml' }[name];
    const on = fixture(`filearchive-${name}.on.${ext}`);
    const r = stripDebuginfo(on, type);
    expect(r.format).toBe(format);
    expect(r.body.equals(fixture(`filearchive-${name}.off.${ext}`))).toBe(true);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' });
  });
});

describe('HTML pages: identical to the toolbar-off page but for request id and timing', () => {
  it.each([
    ['jsonfm', 'html', TYPES.html],
    ['xmlfm', 'html', TYPES.html],
    ['phpfm', 'html', TYPES.html],
    ['rawfm', 'html', TYPES.html],
    ['help', 'html', TYPES.html],
    ['wrapped', 'txt', TYPES.wrapped],
  ] as const)('%s', (name, ext, type) => {
    const on = fixture(`filearchive-${name}.on.${ext}`);
    const r = stripDebuginfo(on, type);
    assertNoLeak(r.body);
    expect(normalise(r.body.toString('utf8'))).toBe(
      normalise(fixture(`filearchive-${name}.off.${ext}`).toString('utf8')),
    );
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17' });
  });
});

describe('siteinfo in each format (the brief list)', () => {
  it('JSONP: /**/cb({...}) keeps its wrapper', () => {
    const r = stripDebuginfo(fixture('siteinfo-jsonp.js'), TYPES.jsonp);
    const s = r.body.toString();
    expect(s.startsWith('/**/cb({"batchcomplete":""')).toBe(true);
    expect(s.endsWith('"nofollowdomainexceptions":["mediawiki.org"]}}})')).toBe(true);
    assertNoLeak(r.body);
    expect(r.format).toBe('jsonp');
  });

  it('jsonfm: both copies go, the <pre> block and the toolbar mw.config.set({"debugInfo":…})', () => {
    const on = fixture('siteinfo-jsonfm.html');
    // the page really holds two copies, each with the request-header dump
    expect(on.toString().match(/HTTP HEADERS/g)).toHaveLength(2);
    const r = stripDebuginfo(on, TYPES.html);
    assertNoLeak(r.body);
    const s = r.body.toString();
    expect(s).toContain('<pre class="api-pretty-content">{\n    "batchcomplete": "",\n');
    expect(s).toContain(
      '            "nofollowdomainexceptions": [\n                "mediawiki.org"\n            ]\n        }\n    }\n}</pre>',
    );
    expect(s).not.toContain('"mediawiki.debug"');
    expect(r.debuginfo!['queries']).toEqual(expect.any(Array));
  });

  it('jsonfm with callback= and with ResourceLoader debug=1 (pretty toolbar JSON)', () => {
    for (const name of ['siteinfo-jsonfm-callback.html', 'siteinfo-jsonfm-rldebug.html']) {
      const r = stripDebuginfo(fixture(name), TYPES.html);
      assertNoLeak(r.body);
      expect(r.format).toBe('html');
    }
  });

  it('xml: <debuginfo> child of <api> goes, with its attributes turned into the usual fields', () => {
    const r = stripDebuginfo(fixture('siteinfo.xml'), TYPES.xml);
    const s = r.body.toString();
    expect(s.startsWith('<?xml version="1.0"?><api batchcomplete=""><query><general ')).toBe(true);
    expect(s.endsWith('</general></query></api>')).toBe(true);
    assertNoLeak(r.body);
    const info = r.debuginfo!;
    expect(info).toMatchObject({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' });
    expect(info['time']).toEqual(expect.any(Number));
    expect(info['memory']).toMatch(/^\d+(\.\d+)? MB$/);
    expect(info['log']).toEqual([
      { msg: 'MWDebug output complete', type: 'log', caller: 'MWDebug::appendDebugInfoToApiResult' },
    ]);
    const queries = info['queries'] as Record<string, unknown>[];
    expect(queries[0]).toEqual({
      sql: expect.any(String),
      function: expect.any(String),
      time: expect.any(Number),
    });
    // MWDebug names the include items "queries" (setIndexedTagName( $debugInfo['includes'], 'queries' ))
    expect((info['includes'] as unknown[])[0]).toEqual({
      name: expect.stringMatching(/\.php$/),
      size: expect.any(String),
    });
    expect((info['debugLog'] as string[])[0]).toMatch(
      /^\n\nStart request GET \/w\/api\.php\?action=query&meta=siteinfo&format=xml\n/,
    );
  });

  it('opensearch format=xml: the root is <SearchSuggestion>, the block is still its child', () => {
    const r = stripDebuginfo(fixture('opensearch.xml'), TYPES.xml);
    expect(r.body.toString().endsWith('</Item></Section></SearchSuggestion>')).toBe(true);
    assertNoLeak(r.body);
  });

  it('php: the pair goes and the top-level count drops from 3 to 2', () => {
    const on = fixture('siteinfo.php.txt');
    expect(on.subarray(0, 5).toString()).toBe('a:3:{');
    const r = stripDebuginfo(on, TYPES.php);
    const s = r.body.toString();
    expect(s.startsWith('a:2:{s:13:"batchcomplete";s:0:"";s:5:"query";a:1:{')).toBe(true);
    assertNoLeak(r.body);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', time: expect.any(Number) });
    expect((r.debuginfo!['includes'] as unknown[]).length).toBeGreaterThan(900);
  });

  it('wrappedhtml: the JSON string "html" is decoded, stripped and re-encoded as PHP would', () => {
    const r = stripDebuginfo(fixture('unicode-jsonfm-wrapped.txt'), TYPES.wrapped);
    const s = r.body.toString();
    assertNoLeak(r.body);
    const parsed = JSON.parse(s) as { html: string; status: number };
    expect(parsed.status).toBe(200);
    expect(parsed.html).toContain('"from": "Z\\u00fcrich\\u2028\\u65e5\\u672c"');
    expect(parsed.html.endsWith('}</pre>')).toBe(true);
  });

  it('action=help&wrap=1: the top-level member and the toolbar copy inside "help.help" go', () => {
    const on = fixture('help-wrap.json');
    const r = stripDebuginfo(on, TYPES.json);
    assertNoLeak(r.body);
    const parsed = JSON.parse(r.body.toString()) as { help: { help: string } };
    expect(parsed.help.help).toContain('<title>MediaWiki API help - LabWiki</title>');
  });
});

describe('synthetic shapes', () => {
  it('xmlfm-style indentation: the element and its indentation go', () => {
    const input =
      '<?xml version="1.0"?>\n<api a="">\n  <query />\n  <debuginfo time="0.5" memory="1 MB">\n    <log />\n  </debuginfo>\n</api>';
    const r = stripDebuginfo(Buffer.from(input), TYPES.xml);
    expect(r.body.toString()).toBe('<?xml version="1.0"?>\n<api a="">\n  <query />\n</api>');
    expect(r.debuginfo).toEqual({ time: 0.5, memory: '1 MB', log: [] });
  });

  it('a nested <debuginfo> (not a child of the root) is left alone', () => {
    const input = '<?xml version="1.0"?><api><query><debuginfo a="1" /></query></api>';
    expect(stripDebuginfo(Buffer.from(input), TYPES.xml).body.toString()).toBe(input);
  });

  it('php: a "debuginfo" string value and a nested key are left alone', () => {
    const input = 'a:2:{s:1:"a";s:9:"debuginfo";s:1:"b";a:1:{s:9:"debuginfo";i:1;}}';
    expect(stripDebuginfo(Buffer.from(input), TYPES.php).body.toString()).toBe(input);
  });

  it('php: string lengths are bytes, so multi-byte text is skipped correctly', () => {
    const input = 'a:2:{s:1:"t";s:10:"ü"debuginfo";s:9:"debuginfo";a:1:{s:4:"time";d:0.5;}}'.replace(
      's:10:"ü"debuginfo"',
      's:12:"ü"debuginfo"',
    );
    const r = stripDebuginfo(Buffer.from(input), TYPES.php);
    expect(r.body.toString()).toBe('a:1:{s:1:"t";s:12:"ü"debuginfo";}');
    expect(r.debuginfo).toEqual({ time: 0.5 });
  });

  it('html <pre> content that does not round-trip through Html::element() escaping fails closed', () => {
    const input = '<html><pre class="api-pretty-content">{"debuginfo": &quot;x&quot;}</pre></html>';
    expect(() => stripDebuginfo(Buffer.from(input), TYPES.html)).toThrow(DebuginfoStripError);
  });

  it('an API pretty page without the plain <pre> (a highlighter hook) fails closed', () => {
    const input =
      '<html><div class="api-pretty-header">x</div><div class="mw-highlight"><span>"debuginfo"</span></div></html>';
    expect(() => stripDebuginfo(Buffer.from(input), TYPES.html)).toThrow(DebuginfoStripError);
  });

  it.each([
    ['xml', '<api><debuginfo a="1"></api>'],
    ['php', 'a:1:{s:9:"debuginfo";a:1:{s:4:"time";d:0.5;}'],
    ['jsonp', '/**/cb({"debuginfo":{}}'],
  ] as const)('broken %s fails closed', (kind, text) => {
    const type = kind === 'xml' ? TYPES.xml : kind === 'php' ? TYPES.php : TYPES.jsonp;
    expect(() => stripDebuginfo(Buffer.from(text), type)).toThrow(DebuginfoStripError);
  });

  it('without a Content-Type the format is sniffed', () => {
    expect(stripDebuginfo(Buffer.from('{"a":1,"debuginfo":{}}'), undefined).body.toString()).toBe('{"a":1}');
    expect(stripDebuginfo(Buffer.from('a:1:{s:9:"debuginfo";a:0:{}}'), undefined).body.toString()).toBe(
      'a:0:{}',
    );
    expect(() => stripDebuginfo(Buffer.from('debuginfo'), undefined)).toThrow(DebuginfoStripError);
  });
});
