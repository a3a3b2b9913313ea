// wbparsevalue and wbformatvalue take the datatype from `datatype=` or from a property
// (`property=P123`: ParseValue::getParser and getValidator, FormatSnakValue::getDataTypeId read it
// with PropertyDataTypeLookup; Wikibase's own help example is
// `action=wbparsevalue&property=P123&validate&values=foo`). The module table looked at `datatype=`
// alone: `property=P5&validate&values=Q99` of an item-valued property (answer: valid false, Q99
// does not exist) depended on nothing, so creating Q99 never evicted it; a commonsMedia property's
// check against the remote file repository was kept as long as the follower vouched.
// A datatype read from a property makes the answer depend on the property (its datatype is read
// from it), and it may be any datatype: with `validate`, on the entities its values name (an
// entity datatype checks they exist) and live (commonsMedia, geo-shape, tabular-data check a
// remote repository). wbformatvalue's commonsMedia in the verbose HTML dispositions is rendered
// by CommonsInlineImageFormatter, which reads the file from the file repository: live too
// (WikibaseValueFormatterBuilders::newCommonsMediaFormatter; plain `text/html` is
// CommonsLinkFormatter, a link made from the name alone). src/mediawiki/modules.ts.
import { describe, expect, it } from 'vitest';
import { modulesOf } from '../../src/policy/request.js';
import { changesAreSignalled, dependenciesOf } from '../../src/policy/dependencies.js';
import { changeFromRow } from '../../src/policy/changes.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

function of(q: string, answer: unknown = {}) {
  const query = parsePhpQuery(`${q}&format=json`);
  const modules = modulesOf(query);
  return { tags: dependenciesOf({ query, modules, override: undefined, answer: () => answer }).tags, followed: changesAreSignalled(modules, query) };
}
const reaches = (change: readonly string[], answer: readonly string[]) => answer.some((t) => change.includes(t));
const created = (title: string) => changeFromRow({ type: 'new', ns: 120, title, pageid: 99, rcid: 1, timestamp: '2026-11-29T09:00:00Z' }).tags;

describe('wbparsevalue with the datatype of a property', () => {
  it('validate: the values` entities and the property; creating Q99 evicts the answer that said it did not exist', () => {
    const { tags, followed } = of('action=wbparsevalue&property=P5&validate&values=Q99', { results: [{ raw: 'Q99', valid: false }] });
    expect(tags).toEqual(expect.arrayContaining(['p:Item:Q99', 'p:Property:P5']));
    expect(reaches(created('Item:Q99'), tags)).toBe(true);
    // The property may be commonsMedia: a remote repository's file.
    expect(followed).toBe(false);
  });

  it('without validate: the property alone (its datatype picks the parser), followed', () => {
    // (its datatype may be time, whose parser reads month names: n:8, modules.ts ModuleFacts.messages)
    expect(of('action=wbparsevalue&property=P5&values=Q99')).toEqual({ tags: ['p:Property:P5', 'p:P5', 'n:8'], followed: true });
  });

  it('`datatype=` still decides alone when given (ParseValue allows one of property, datatype, parser)', () => {
    expect(of('action=wbparsevalue&datatype=string&values=1237&validate')).toEqual({ tags: [], followed: true });
    expect(of('action=wbparsevalue&datatype=commonsMedia&values=Foo.jpg&validate').followed).toBe(false);
  });
});

describe('wbformatvalue, commonsMedia rendered inline', () => {
  const file = encodeURIComponent(JSON.stringify({ type: 'string', value: 'Sunset.jpg' }));
  const formatting = (extra: string) => of(`action=wbformatvalue&datavalue=${file}${extra}`, { result: '…' });

  it.each([['text/html; disposition=verbose'], ['text/html; disposition=verbose-preview']])(
    'generate=%s of a commonsMedia datatype, or of a property`s, reads the file repository: live',
    (generate) => {
      const g = `&generate=${encodeURIComponent(generate)}`;
      expect(formatting(`&datatype=commonsMedia${g}`).followed).toBe(false);
      const byProperty = formatting(`&property=P7${g}`);
      expect(byProperty.followed).toBe(false);
      expect(byProperty.tags).toContain('p:Property:P7');
    },
  );

  it('a link, wikitext or plain text names the file without reading it; another datatype is not read remotely', () => {
    for (const generate of ['text/html', 'text/x-wiki', 'text/plain']) {
      expect(formatting(`&datatype=commonsMedia&generate=${encodeURIComponent(generate)}`).followed).toBe(true);
      expect(formatting(`&property=P7&generate=${encodeURIComponent(generate)}`).followed).toBe(true);
    }
    expect(formatting(`&datatype=string&generate=${encodeURIComponent('text/html; disposition=verbose')}`).followed).toBe(true);
  });
});
