// A property's datatype changes without its deletion: Wikibase's changePropertyDataType.php
// (PropertyDataTypeChanger::changeDataType) saves the property with the new datatype, in a
// revision whose summary is its own ("Changing DataType from string to external-id") and no
// autocomment. Every item answer showing a snak of that property then shows the new datatype, yet
// the cached ones kept the old: only the deletion or restoration of a property's page carried
// `dt` (dependencies.ts DATATYPES). A revision of a property's page that no Wikibase API module
// made now carries it too (changes.ts mayChangeDatatype); an edit through the API (a label, a
// statement: many a day on Wikidata) still evicts no item.
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { DATATYPES } from '../../src/policy/dependencies.js';
import { changeConfirmed, changeFromRow, changeFromWrite, mayChangeDatatype } from '../../src/policy/changes.js';
import { PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { namespacesFromSiteinfo } from '../../src/mediawiki/titles.js';

const ns = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '120': { id: 120, name: 'Item', canonical: 'Item', defaultcontentmodel: 'wikibase-item' },
    '122': { id: 122, name: 'Property', canonical: 'Property', defaultcontentmodel: 'wikibase-property' },
  },
});
const NOW = Date.parse('2026-11-30T06:00:00Z');
const SCRIPT = 'Changing DataType from string to external-id';

describe('a revision of a property`s page', () => {
  const row = (comment: string | undefined, extra: Record<string, unknown> = {}) =>
    changeFromRow(
      {
        rcid: 1,
        timestamp: '2026-11-30T05:59:59Z',
        type: 'edit',
        ns: 122,
        title: 'Property:P4',
        pageid: 10,
        revid: 40,
        ...(comment !== undefined && { comment }),
        ...extra,
      },
      ns,
    ).tags;

  it('made by changePropertyDataType.php, with a hidden summary, or a revert of one: the datatypes go', () => {
    expect(row(SCRIPT)).toContain(DATATYPES);
    expect(row(undefined, { commenthidden: true })).toContain(DATATYPES);
    expect(row('/* wbsetlabel-set:1|en */ x', { tags: ['mw-undo'] })).toContain(DATATYPES);
  });

  it('made through Wikibase`s API (a label, a statement, a new property): no item answer goes', () => {
    expect(row('/* wbsetlabel-set:1|en */ population size')).not.toContain(DATATYPES);
    expect(row('/* wbeditentity-update-languages-short:0||de */')).not.toContain(DATATYPES);
    expect(row('/* wbsetclaimvalue:1| */ [[Property:P2]]: 5')).not.toContain(DATATYPES);
    expect(
      changeFromRow(
        { rcid: 2, timestamp: '2026-11-30T05:59:59Z', type: 'new', ns: 122, title: 'Property:P9', comment: '/* wbeditentity-create-property:0| */' },
        ns,
      ).tags,
    ).not.toContain(DATATYPES);
  });

  it('a property`s term edit through Special:SetLabelDescriptionAliases carries no datatype; a revert of any summary does', () => {
    const row = (comment: string, tags: string[]) =>
      changeFromRow({ rcid: 4, timestamp: '2026-11-30T05:59:59Z', type: 'edit', ns: 122, title: 'Property:P4', comment, tags }, ns).tags;
    expect(row('/* wbsetlabeldescriptionaliases:1|en */ instance of', [])).not.toContain(DATATYPES);
    // An undo or a rollback carries its client's summary, whatever it says.
    for (const tag of ['mw-undo', 'mw-rollback', 'mw-manual-revert']) {
      expect(row('/* wbsetlabel-set:1|en */ instance of', [tag])).toContain(DATATYPES);
      expect(row('/* wbsetlabeldescriptionaliases:1|en */ instance of', [tag])).toContain(DATATYPES);
    }
  });

  it('revisions imported into a property`s page (its newest may be another datatype`s, and no edit row follows): the datatypes go', () => {
    expect(row(undefined, { type: 'log', logtype: 'import', logaction: 'upload', comment: 'imported' })).toContain(DATATYPES);
    expect(row(undefined, { type: 'log', logtype: 'import', logaction: 'interwiki' })).toContain(DATATYPES);
    // A history merge moves only revisions older than the page's oldest: its newest stays.
    expect(row(undefined, { type: 'log', logtype: 'merge', logaction: 'merge' })).not.toContain(DATATYPES);
    // Other log rows of the page: its existence and revisions stay.
    expect(row(undefined, { type: 'log', logtype: 'protect', logaction: 'protect' })).not.toContain(DATATYPES);
    const itemImport = changeFromRow(
      { rcid: 2, timestamp: '2026-11-30T05:59:59Z', type: 'log', logtype: 'import', logaction: 'upload', ns: 120, title: 'Item:Q1' },
      ns,
    ).tags;
    expect(itemImport).not.toContain(DATATYPES);
  });

  it('an item`s revision by any summary carries no datatype', () => {
    const item = changeFromRow({ rcid: 3, timestamp: '2026-11-30T05:59:59Z', type: 'edit', ns: 120, title: 'Item:Q1', comment: SCRIPT }, ns).tags;
    expect(item).not.toContain(DATATYPES);
    expect(mayChangeDatatype(SCRIPT, undefined)).toBe(true);
  });

  /** The tags a confirmation of Property:P4 applies, its newest revision `newest`, the one seen before `before` (none: never seen). */
  async function confirmedTags(newest: Partial<PageNow>, before?: PageNow, parentMadeAt?: number): Promise<string[]> {
    const applied: string[] = [];
    let page: PageNow | undefined = before;
    const c = new PurgeConfirmations({
      ask: async (titles) => ({ pages: titles.map((title): PageNow => ({ ...page!, title })), now: NOW }),
      askRevisions: async (revids) => new Map(parentMadeAt === undefined ? [] : revids.map((r) => [r, parentMadeAt])),
      confirmed: (title, onlyStatements, pageId, datatypes) => changeConfirmed(title, ns, onlyStatements, pageId, datatypes),
      apply: async (list) => void applied.push(...list.flatMap((ch) => ch.tags)),
      log: pino({ level: 'silent' }),
    });
    if (before) {
      c.note('Property:P4');
      await c.settled();
      applied.length = 0;
    }
    page = { title: 'Property:P4', missing: false, revid: 41, parentid: 40, revisionAt: NOW - 1_000, ...newest };
    c.note('Property:P4');
    await c.settled();
    expect(applied).toContain('p:Property:P4');
    return applied;
  }
  const LABEL = '/* wbsetlabel-set:1|en */ population size';

  it('with PURGEs alone: the confirmation reads the newest revision`s summary', async () => {
    expect(await confirmedTags({ comment: SCRIPT })).toContain(DATATYPES);
    // Never seen, its parent made before the window: the label edit is all that changed.
    expect(await confirmedTags({ comment: LABEL }, undefined, NOW - 86_400_000)).not.toContain(DATATYPES);
    // Seen at the parent: the same.
    expect(await confirmedTags({ comment: LABEL }, { title: 'Property:P4', missing: false, revid: 40, revisionAt: NOW - 86_400_000 })).not.toContain(DATATYPES);
  });

  it('with PURGEs alone: only the newest revision is read, so a burst of a bot`s label edits of a property evicts no statement answer', async () => {
    // Parent within the window, or undated, or seen two revisions back: the newest is an API edit.
    expect(await confirmedTags({ comment: LABEL }, undefined, NOW - 2_000)).not.toContain(DATATYPES);
    expect(await confirmedTags({ comment: LABEL })).not.toContain(DATATYPES);
    expect(await confirmedTags({ comment: LABEL }, { title: 'Property:P4', missing: false, revid: 39, revisionAt: NOW - 86_400_000 })).not.toContain(DATATYPES);
  });
});

describe('a revert of a property`s page through the gateway', () => {
  const write = (action: string, params: Record<string, string>, answer: unknown) => changeFromWrite(action, (n) => params[n], ns, answer)!.tags;

  it('an undo through action=edit, or a rollback: the datatypes go (the revision brought back may have another)', () => {
    const undo = write(
      'edit',
      { action: 'edit', title: 'Property:P4', undo: '41', token: 't' },
      {
        edit: { result: 'Success', pageid: 10, title: 'Property:P4', contentmodel: 'wikibase-property', oldrevid: 41, newrevid: 42 },
      },
    );
    expect(undo).toContain(DATATYPES);
    const rollback = write(
      'rollback',
      { action: 'rollback', title: 'Property:P4', user: 'Bot', token: 't' },
      {
        rollback: { title: 'Property:P4', pageid: 10, summary: 'Reverted', revid: 43, old_revid: 42, last_revid: 41 },
      },
    );
    expect(rollback).toContain(DATATYPES);
  });

  it('an edit of any other page: none', () => {
    expect(
      write('edit', { action: 'edit', title: 'Item:Q1', undo: '5', token: 't' }, { edit: { result: 'Success', title: 'Item:Q1', oldrevid: 5, newrevid: 6 } }),
    ).not.toContain(DATATYPES);
  });
});

describe('a PURGE of a page the wiki could not confirm', () => {
  it('as if changed: the page id remembered (a MediaInfo entity`s answers name it alone); not the datatypes (a failing wiki would lose every statement answer at each question)', async () => {
    const applied: string[][] = [];
    let fail = false;
    const c = new PurgeConfirmations({
      ask: async (titles) => {
        if (fail) throw new Error('the wiki answered 503');
        return { pages: titles.map((title): PageNow => ({ title, missing: false, revid: 40, pageid: 10, revisionAt: NOW - 86_400_000 })), now: NOW };
      },
      confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, ns, onlyStatements, pageId, existence),
      apply: async (list) => {
        for (const x of list) applied.push([...x.tags]);
      },
      log: pino({ level: 'silent' }),
    });
    c.note('Property:P4');
    await c.settled();
    fail = true;
    c.note('Property:P4');
    await c.settled();
    expect(applied.at(-1)).toEqual(expect.arrayContaining(['*', 'p:Property:P4', 'i:10']));
    expect(applied.at(-1)).not.toContain(DATATYPES);
  });
});
