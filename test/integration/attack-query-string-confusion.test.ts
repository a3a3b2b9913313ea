// Security round 2, class 3: keys are exactly what PHP runs. `/w/api.php??action=…` (php -S
// drops the extra `?`: the wiki runs the action; Apache and nginx hand PHP a parameter named
// `?action`) and `/w/api.php?%3Faction=…` (a parameter named `?action` everywhere: the help page)
// shared one key, so one URL's answer was served for the other, and module rules were blind to
// the first. Judged by a real PHP (php -S echo) and the real wiki.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { parseTarget, queryIsAmbiguous } from '../../src/words/target.js';
import { type PhpEcho, startPhpEcho, toPairs } from '../support/php-echo.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, rawTarget } from '../support/http.js';

const PIECES = ['?', '??', 'a', 'action', '=', '&', 'x', '%3F', '%23', '#', '/', '%26', '1'] as const;

describe('the gateway`s view of a target against what php -S hands PHP', () => {
  let php: PhpEcho;
  beforeAll(async () => {
    php = await startPhpEcho();
  });
  afterAll(() => php?.stop());

  it('a target the gateway keys is parsed to exactly $_GET; the others are never keyed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { maxLength: 12 }), async (parts) => {
        const target = `/?${parts.join('')}`;
        const gateway = parseTarget(target);
        // A fragment is refused (400) and an ambiguous query is passed: no key at all.
        if (gateway.hasFragment || queryIsAmbiguous(gateway.rawQuery)) return;
        const r = await php.request(target);
        expect(toPairs(parsePhpQuery(gateway.rawQuery))).toEqual(toPairs(r.get));
      }),
      { numRuns: 300, interruptAfterTimeLimit: 30_000, markInterruptAsFailure: false },
    );
  });

  it('php -S really does drop the extra `?` (the premise)', async () => {
    const r = await php.request('/??action=query');
    expect(toPairs(r.get)).toEqual(toPairs(parsePhpQuery('action=query')));
  });
});

describe('through the gateway, against the real wiki', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_MODULES: JSON.stringify({ parse: { pass: true } }) });
  });
  afterAll(() => gw.close());

  it('`??action=` and `?%3Faction=` never share an answer', async () => {
    const id = randomUUID();
    const encoded = await rawTarget(gw.url, `/w/api.php?%3Faction=query&meta=siteinfo&format=json&requestid=${id}`);
    expect(header(encoded, 'x-cache')).toMatch(/miss|pass/);
    const doubled = await rawTarget(gw.url, `/w/api.php??action=query&meta=siteinfo&format=json&requestid=${id}`);
    expect(header(doubled, 'x-cache')).toBe('pass');
    // The wiki ran the action for the doubled one (php -S), and the help page for the other.
    expect(JSON.parse(doubled.body).query?.general).toBeDefined();
    expect(doubled.body).not.toBe(encoded.body);
  });

  it('a module rule is not blind to `??action=`', async () => {
    const res = await rawTarget(gw.url, `/w/api.php??action=parse&text=x&format=json&requestid=${randomUUID()}`);
    expect(header(res, 'x-cache')).toBe('pass');
    const again = await rawTarget(gw.url, `/w/api.php??action=parse&text=x&format=json&requestid=${randomUUID()}`);
    expect(header(again, 'x-cache')).toBe('pass');
  });

  it('a target with a fragment is refused in MediaWiki`s error shape', async () => {
    for (const target of ['/w/api.php#x?action=query&format=json', '/w/api.php?action=query&format=json#frag']) {
      const res = await rawTarget(gw.url, target);
      expect(res.status).toBe(400);
      expect(header(res, 'mediawiki-api-error')).toBe('wikiedge-bad-request');
    }
    const plain = await http(`${gw.url}/w/index.php`);
    expect(plain.status).not.toBe(400);
  });
});
