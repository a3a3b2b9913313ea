/**
 * stripDebuginfo on format=xml and the custom XML printers, action=rsd and
 * action=opensearch&format=xml (src/mediawiki/debuginfo/xml.ts): the child `<debuginfo>` of the root.
 * Fixtures from a throw-away lab wiki (Debian's MediaWiki 1.39.17, lab/setup.sh --debug, no cookies
 * sent), see test/fixtures/debuginfo/README.md; `.on` / `.off` are the same request with
 * $wgDebugToolbar on and off.
 */
import { describe, expect, it } from 'vitest';
import { DebuginfoStripError, stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture, expectNoDebuginfo as assertNoLeak } from '../support/debuginfo-fixtures.js';

const fixture = (name: string): Buffer => debuginfoFixture(`${name}.gz`);

const TYPES = {
  xml: 'text/xml; charset=utf-8',
  rsd: 'application/rsd+xml; charset=utf-8',
};

describe('byte-identical to the same request with the toolbar off (list=filearchive)', () => {
  it.each([
    ['xml', TYPES.xml, 'xml'],
    ['rsd', TYPES.rsd, 'xml'],
  ] as const)('%s', (name, type, format) => {
    const on = fixture(`filearchive-${name}.on.xml`);
    const r = stripDebuginfo(on, type);
    expect(r.format).toBe(format);
    expect(r.body.equals(fixture(`filearchive-${name}.off.xml`))).toBe(true);
    expect(r.debuginfo).toMatchObject({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' });
  });
});

describe('siteinfo and opensearch', () => {
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
    expect(info['log']).toEqual([{ msg: 'MWDebug output complete', type: 'log', caller: 'MWDebug::appendDebugInfoToApiResult' }]);
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
    expect((info['debugLog'] as string[])[0]).toMatch(/^\n\nStart request GET \/w\/api\.php\?action=query&meta=siteinfo&format=xml\n/);
  });

  it('opensearch format=xml: the root is <SearchSuggestion>, the block is still its child', () => {
    const r = stripDebuginfo(fixture('opensearch.xml'), TYPES.xml);
    expect(r.body.toString().endsWith('</Item></Section></SearchSuggestion>')).toBe(true);
    assertNoLeak(r.body);
  });
});

describe('synthetic shapes', () => {
  it('xmlfm-style indentation: the element and its indentation go', () => {
    const input = '<?xml version="1.0"?>\n<api a="">\n  <query />\n  <debuginfo time="0.5" memory="1 MB">\n    <log />\n  </debuginfo>\n</api>';
    const r = stripDebuginfo(Buffer.from(input), TYPES.xml);
    expect(r.body.toString()).toBe('<?xml version="1.0"?>\n<api a="">\n  <query />\n</api>');
    expect(r.debuginfo).toEqual({ time: 0.5, memory: '1 MB', log: [] });
  });

  it('a nested <debuginfo> (not a child of the root) is left alone', () => {
    const input = '<?xml version="1.0"?><api><query><debuginfo a="1" /></query></api>';
    expect(stripDebuginfo(Buffer.from(input), TYPES.xml).body.toString()).toBe(input);
  });

  it.each([['xml', '<api><debuginfo a="1"></api>']] as const)('broken %s fails closed', (_kind, text) => {
    expect(() => stripDebuginfo(Buffer.from(text), TYPES.xml)).toThrow(DebuginfoStripError);
  });
});
