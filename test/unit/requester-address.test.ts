// Which anonymous answers hold the requester's own address (mediawiki/requester-address.ts).
import { describe, expect, it } from 'vitest';
import { echoesRequester, MAX_REQUESTER_HOPS, mentionsAny, requesterAddressForms, requesterHops } from '../../src/mediawiki/requester-address.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

describe('echoesRequester: modules that print the current user into supplied text', () => {
  it.each([
    ['action=parse&text=~~~&pst=1', true],
    ['action=parse&text={{REVISIONUSER}}', true],
    ['action=parse&onlypst=1&text=x', true],
    ['action=parse&page=Main_Page', false],
    // A preview renders {{REVISIONUSER}} as the current user when the revision hides its author (Parser::getRevisionUser).
    ['action=parse&page=Main_Page&preview=1', true],
    ['action=parse&page=Main_Page&section=1&sectionpreview=1', true],
    ['action=expandtemplates&text={{REVISIONUSER}}', true],
    ['action=compare&fromtext=a&totext=~~~&topst=1', true],
    ['action=compare&fromrev=1&torev=2', false],
    ['action=query&meta=siteinfo', false],
  ])('%s → %s', (q, expected) => {
    expect(echoesRequester(parsePhpQuery(q))).toBe(expected);
  });
});

describe('requesterAddressForms: every spelling MediaWiki may print', () => {
  it('IPv4, with MediaWiki`s leading-zero removal (IPUtils::sanitizeIP)', () => {
    expect(requesterAddressForms('203.0.113.7')).toEqual(['203.0.113.7']);
    expect(requesterAddressForms('010.001.002.003')).toContain('10.1.2.3');
  });
  it('IPv6 as sent, lower case, and sanitised (upper case, expanded)', () => {
    const forms = requesterAddressForms('2001:db8::1');
    expect(forms).toContain('2001:db8::1');
    expect(forms).toContain('2001:DB8:0:0:0:0:0:1');
    expect(requesterAddressForms('::ffff:192.0.2.1')).toContain('0:0:0:0:0:FFFF:C000:201');
  });
  it('every hop of the chain, loopback left out', () => {
    expect(requesterAddressForms('198.51.100.9, 203.0.113.7, 127.0.0.1')).toEqual(['198.51.100.9', '203.0.113.7']);
    expect(requesterAddressForms('::1')).toEqual([]);
    expect(requesterAddressForms('127.0.0.1')).toEqual([]);
  });
  it('garbage is ignored', () => {
    expect(requesterAddressForms('unknown, , 999.1.1.1')).toEqual([]);
  });
});

describe('mentionsAny', () => {
  it('finds a signature`s address in a parse answer', () => {
    const body = Buffer.from('{"parse":{"text":{"*":"<a href=\\"/w/index.php/Special:Contributions/203.0.113.7\\">203.0.113.7</a>"}}}');
    expect(mentionsAny(body, requesterAddressForms('203.0.113.7'))).toBe(true);
    expect(mentionsAny(body, requesterAddressForms('198.51.100.9'))).toBe(false);
  });
});

describe('requesterAddressForms remembered', () => {
  it('gives the same spellings for a value seen before, and cannot be changed by a caller', () => {
    const first = requesterAddressForms('198.51.100.23, 127.0.0.1');
    const again = requesterAddressForms('198.51.100.23, 127.0.0.1');
    expect(again).toBe(first);
    expect(again).toEqual(['198.51.100.23']);
    expect(Object.isFrozen(again)).toBe(true);
  });

  it('works out a long value every time, and stays right past the bound of values it keeps', () => {
    const long = Array.from({ length: 20 }, (_, i) => `192.0.2.${i + 1}`).join(', ');
    expect(long.length).toBeGreaterThan(128);
    expect(requesterAddressForms(long)).toHaveLength(20);
    for (let i = 0; i < 5000; i++) requesterAddressForms(`203.0.113.${i % 250}, 10.${i >> 8}.${i & 255}.1`);
    expect(requesterAddressForms('2001:db8::7')).toContain('2001:DB8:0:0:0:0:0:7');
  });
});

describe('requesterHops: the hops of X-Forwarded-For MediaWiki may name the requester by', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['203.0.113.7, 127.0.0.1', '203.0.113.7, 127.0.0.1'],
    // Whatever the gateway trusts: the wiki may trust more (an Opera Mini proxy) and walk further.
    ['198.51.100.20, 192.0.2.1, 203.0.113.7, 127.0.0.1', '198.51.100.20, 192.0.2.1, 203.0.113.7, 127.0.0.1'],
    ['1.1.1.1,2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8,9.9.9.9', '2.2.2.2,3.3.3.3,4.4.4.4,5.5.5.5,6.6.6.6,7.7.7.7,8.8.8.8,9.9.9.9'],
    ['', ''],
  ])('%s → %s', (header, hops) => {
    expect(requesterHops(header)).toBe(hops);
  });

  it('a client that writes a thousand addresses has the rightmost MAX_REQUESTER_HOPS searched for', () => {
    const written = Array.from({ length: 1_000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(', ');
    const hops = requesterHops(`${written}, 127.0.0.1`);
    expect(hops.split(',')).toHaveLength(MAX_REQUESTER_HOPS);
    expect(hops.endsWith('10.0.3.231, 127.0.0.1')).toBe(true);
    expect(requesterAddressForms(hops).length).toBeLessThanOrEqual(MAX_REQUESTER_HOPS * 7);
  });
});
