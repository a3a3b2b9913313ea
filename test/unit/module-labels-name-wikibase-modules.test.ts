// The bounded `module` label names Wikibase's modules (src/mediawiki/modules.ts is the one list),
// so hit ratios and invalidations can be read per Wikibase module; invented names stay `other`.
import { describe, expect, it } from 'vitest';
import { moduleLabeller } from '../../src/mediawiki/modules.js';
import { modulesOf } from '../../src/policy/request.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { readFileSync } from 'node:fs';
import { WIKIBASE_MODULE_NAMES } from '../../src/mediawiki/modules.js';

const label = moduleLabeller([]);
const of = (q: string) => label(modulesOf(parsePhpQuery(q)));

describe('module labels', () => {
  it.each([
    ['action=wbgetentities&ids=Q1', 'wbgetentities'],
    ['action=wbsearchentities&search=x', 'wbsearchentities'],
    ['action=wbgetclaims&entity=Q1', 'wbgetclaims'],
    ['action=wbformatvalue', 'wbformatvalue'],
    ['action=wbformatentities&ids=Q1', 'wbformatentities'],
    ['action=wbparsevalue', 'wbparsevalue'],
    ['action=wbsetclaimvalue', 'wbsetclaimvalue'],
    ['action=wbmergeitems', 'wbmergeitems'],
    ['action=query&list=wbsearch&wbssearch=x', 'query+wbsearch'],
    ['action=query&prop=entityterms&titles=Item:Q1', 'query+entityterms'],
    ['action=query&meta=wbcontentlanguages', 'query+wbcontentlanguages'],
    ['action=wbnosuchthing', 'other'],
    ['action=query&list=wbnosuchlist', 'query+other'],
  ])('%s → %s', (q, expected) => {
    expect(of(q)).toBe(expected);
  });
  it('the dashboard`s Wikibase row lists every Wikibase module the table knows', () => {
    expect(WIKIBASE_MODULE_NAMES).toEqual(
      expect.arrayContaining(['wbgetentities', 'wbsearchentities', 'query+wbsearch', 'query+entityterms', 'query+wbcontentlanguages']),
    );
  });
  it('the dashboard`s Wikibase panels select exactly the Wikibase modules of the table', () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../config/grafana/dashboards/wikiedge.json', import.meta.url), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const panels = dashboard.panels.filter((p) => p.title.startsWith('Wikibase') && p.targets);
    expect(panels.length).toBe(3);
    for (const panel of panels) {
      const matcher = /module=~"([^"]+)"/.exec(panel.targets![0]!.expr)![1]!;
      // PromQL's =~ is anchored at both ends (RE2, whose syntax JavaScript reads the same here).
      const re = new RegExp(`^(?:${matcher})$`);
      for (const name of WIKIBASE_MODULE_NAMES) expect(re.test(name), `${panel.title}: ${name}`).toBe(true);
      for (const name of ['query', 'query+info', 'parse', 'edit', 'other', 'query+other']) expect(re.test(name), `${panel.title}: ${name}`).toBe(false);
    }
  });
});
