// Title keys (src/mediawiki/titles.ts): every spelling of a page meets the canonical one that
// answers and changes carry; examples from MediaWiki 1.39's normalisation (MediaWikiTitleCodec::splitTitleString).
import { describe, expect, it } from 'vitest';
import { namespacesFromSiteinfo, titleKey } from '../../src/mediawiki/titles.js';

describe('titleKey', () => {
  it.each([
    ['Main Page', 'Main Page', 0],
    ['Main_Page', 'Main Page', 0],
    ['main page', 'Main page', 0],
    ['  lab_a2  ', 'Lab a2', 0],
    ['Lab\u00a0X', 'Lab X', 0],
    ['Lab\u200eX', 'LabX', 0],
    [':Main Page', 'Main Page', 0],
    ['main page#frag', 'Main page', 0],
    ['talk:foo_bar', 'Talk:Foo bar', 1],
    ['Talk:Foo bar', 'Talk:Foo bar', 1],
    ['image:X.png', 'File:X.png', 6],
    ['FILE:x.png', 'File:X.png', 6],
    ['user talk:Bob', 'User talk:Bob', 3],
    ['e\u0301clair', 'Éclair', 0],
    ['ßtraße', 'SStraße', 0],
    ['Nope:Thing', 'Nope:Thing', 0],
  ])('%j → %j (ns %i)', (text, key, ns) => {
    expect(titleKey(text)).toEqual({ key, ns });
  });

  it('is idempotent on its own output', () => {
    for (const t of ['talk:foo_bar', 'image:x.png', 'e\u0301clair', 'main page#x']) {
      const once = titleKey(t)!.key;
      expect(titleKey(once)!.key).toBe(once);
    }
  });

  it('nothing to key: empty, or a fragment alone', () => {
    expect(titleKey('')).toBeUndefined();
    expect(titleKey('#frag')).toBeUndefined();
    expect(titleKey('   ')).toBeUndefined();
  });

  it('a wiki`s own namespace names (siteinfo): Project is the meta namespace, localised names count', () => {
    const ns = namespacesFromSiteinfo({
      namespaces: { '4': { id: 4, name: 'LabWiki', canonical: 'Project' }, '6': { id: 6, name: 'Datei', canonical: 'File' } },
      namespacealiases: [{ id: 6, alias: 'Bild' }],
    });
    expect(titleKey('project:About', ns)).toEqual({ key: 'LabWiki:About', ns: 4 });
    expect(titleKey('labwiki:About', ns)).toEqual({ key: 'LabWiki:About', ns: 4 });
    expect(titleKey('file:x.png', ns)).toEqual({ key: 'Datei:X.png', ns: 6 });
    expect(titleKey('bild:x.png', ns)).toEqual({ key: 'Datei:X.png', ns: 6 });
    expect(titleKey('image:x.png', ns)).toEqual({ key: 'Datei:X.png', ns: 6 });
  });
});
