// Any registered user can make the move log hold more rows than one answer of the confirmation's
// question (a move with `movesubpages` and `movetalk` writes up to 202 rows for one rate-limit
// token: ApiMove pings the limiter once, MovePage moves up to 100 subpages and 100 talk
// subpages), and any anonymous client can make the wiki send a PURGE of a page that does not
// exist (index.php `action=purge` needs no right). A page the confirmation had never seen, missing
// on the wiki, was then taken for one just deleted because the log's answer was cut: each fresh
// `Property:P…` title purged emptied every list, every search of its entity type and, through
// `dt`, every entity answer that shows statements, on every replica, as often as wanted
// (docs/SECURITY.md class 65). Only a log row naming the page confirms its deletion now.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { type Deletions, PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, type Change } from '../../src/policy/changes.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const NOW = Date.parse('2026-12-01T11:00:00Z');
const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});

function confirmer(deletions: () => Deletions | Error) {
  const applied: Change[] = [];
  const c = new PurgeConfirmations({
    // Every page asked about is missing: the attacker purges titles that never existed.
    ask: async (titles) => ({ pages: titles.map((title): PageNow => ({ title, missing: true })), now: NOW }),
    askDeletions: async () => {
      const d = deletions();
      if (d instanceof Error) throw d;
      return d;
    },
    confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, ns, onlyStatements, pageId, existence),
    apply: async (list) => void applied.push(...list),
    log: pino({ level: 'silent' }),
  });
  return { c, tags: () => applied.flatMap((ch) => ch.tags) };
}

/** The move log's answer during the flood: 500 rows of the attacker's subpages, and more behind them. */
const flooded = (): Deletions => ({
  titles: new Set(Array.from({ length: 500 }, (_, i) => `User:Mover/${i}`)),
  truncated: true,
});

describe('a move-log flood and PURGEs of fresh missing titles', () => {
  it('evict nothing beyond the pages` own answers: no list, no entity type, no datatype', async () => {
    const { c, tags } = confirmer(flooded);
    for (let i = 0; i < 40; i++) await c.note(`Property:P${900_000 + i}`);
    for (let i = 0; i < 10; i++) await c.note(`Item:Q${900_000 + i}`);
    await c.settled();
    expect(tags()).toEqual([]);
  });

  it('the wiki failing the log question is no proof either', async () => {
    const { c, tags } = confirmer(() => new Error('the wiki answered 503'));
    await c.note('Property:P900100');
    await c.settled();
    expect(tags()).toEqual([]);
  });

  it('a page the log names, even in a cut answer, is a deletion: its lists, its entity type, its datatype', async () => {
    const { c, tags } = confirmer(() => ({ titles: new Set(['Property:P5']), truncated: true }));
    await c.note('Property:P5');
    await c.settled();
    expect(tags()).toEqual(expect.arrayContaining(['*', 'n:122', 't:property', 'dt']));
  });
});
