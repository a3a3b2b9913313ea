// Wikibase's statement setters (wbsetclaimvalue, wbsetclaim, wbsetqualifier, wbsetreference)
// answer `{"pageinfo":{"lastrevid":N},"success":1,…}` whether they saved a revision or not: they
// pass no revision before the save to ResultBuilder::addRevisionIdFromStatusToResult, so no
// `nochange` ever says a null edit happened. Setting a statement to the value it has is such a
// null edit, open to anonymous clients (token `+\`), and emptied every list on every replica.
// Their change names the entity's page alone; lists go once the wiki confirms the page has a new
// revision, as for a PURGE (src/policy/changes.ts Change.confirm, src/invalidation/signals.ts,
// src/invalidation/purge-confirmation.ts).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ChangeSignals } from '../../src/invalidation/signals.js';
import { PurgeConfirmations, type PageNow } from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, changeFromWrite } from '../../src/policy/changes.js';
import type { PurgeMessage } from '../../src/cache/purge.js';

const NOW = Date.parse('2026-11-28T20:00:00Z');
const TTL = { ttlPublicSeconds: 60, ttlSessionSeconds: 10 };

function gateway(newestRevisionAt: number) {
  const purged: string[][] = [];
  const signals = new ChangeSignals({
    purge: async (m: PurgeMessage) => {
      if (m.kind === 'tags') purged.push([...m.tags]);
      return { purged: 0 };
    },
    purgeHere: async () => ({ purged: 0 }),
    metrics: { event: () => {}, invalidated: () => {}, lag: () => {} },
    log: pino({ level: 'silent' }),
    now: () => NOW,
    shortTtl: TTL,
    followedTtl: TTL,
    reboundMs: 0,
  });
  const confirmations = new PurgeConfirmations({
    ask: async (titles) => ({ pages: titles.map((title): PageNow => ({ title, missing: false, revid: 33, revisionAt: newestRevisionAt })), now: NOW }),
    confirmed: (title) => changeConfirmed(title),
    apply: (list) => signals.apply(list),
    log: pino({ level: 'silent' }),
  });
  signals.confirmWith((title) => confirmations.note(title));
  return { signals, purged, confirmations };
}

const params = (p: Record<string, string>) => (name: string) => p[name];
const sameValue = params({ action: 'wbsetclaimvalue', claim: 'Q7$5627-AB', snaktype: 'value', value: '"Potsdam"', token: '+\\' });
const answer = { pageinfo: { lastrevid: 33 }, success: 1, claim: { id: 'Q7$5627-AB' } };

describe('a statement set to the value it has', () => {
  it.each(['wbsetclaimvalue', 'wbsetclaim', 'wbsetqualifier', 'wbsetreference'])('%s names the entity`s page alone, its lists to be confirmed', (action) => {
    const c = changeFromWrite(action, sameValue, undefined, answer)!;
    expect(c.tags.toSorted()).toEqual(['p:Item:Q7', 'p:Q7']);
    expect(c.confirm?.toSorted()).toEqual(['Item:Q7', 'Q7']);
  });

  it('empties no list when the wiki says the page has no new revision (a null edit), however often it is sent', async () => {
    const { signals, purged, confirmations } = gateway(NOW - 86_400_000);
    for (let i = 0; i < 5; i++) await signals.apply([changeFromWrite('wbsetclaimvalue', sameValue, undefined, answer)!]);
    await confirmations.settled();
    expect(purged.flat()).not.toContain('*');
    expect(purged.flat()).toContain('p:Item:Q7');
  });

  it('a real edit (a revision made just now): its page at once, its lists once the wiki confirms, without holding up the writer`s answer', async () => {
    const { signals, purged, confirmations } = gateway(NOW - 1_000);
    await signals.apply([changeFromWrite('wbsetclaimvalue', sameValue, undefined, answer)!]);
    expect(purged.flat()).toContain('p:Item:Q7');
    expect(purged.flat()).not.toContain('*');
    await confirmations.settled();
    expect(purged.flat()).toEqual(expect.arrayContaining(['*', 't:item', 'p:Item:Q7']));
  });
});
