// Anyone may purge a page through index.php (`POST ?title=…&action=purge`, no right, no token;
// the page need not exist), and MediaWiki then PURGEs its URLs through the gateway, among them
// `{script}?title={T}&action=history` (HtmlCacheUpdater::getUrls). The gateway read that `title`
// as bytes, one character each: 45 × 漢 (135 bytes) became a 270-byte title of another page, the
// wiki answered the confirmation `invalid` (over 255 bytes), and a title the wiki did not answer
// about was taken for changed: every list, and the namespace's, emptied on every replica, as often
// as one liked. Three faults, each closed here: the title is read as UTF-8 (php-input.ts
// phpTextParam), a title the wiki calls invalid changed nothing (no page can have it), and one
// question's URL stays short enough for the wiki's web server whatever the titles (a refused
// question takes every page in it for changed).
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { purgedTitle } from '../../src/mediawiki/purge-url.js';
import {
  confirmationQuery,
  type PageNow,
  pagesOfAnswer,
  PurgeConfirmations,
  QUESTION_TITLE_CHARS,
  TITLES_PER_QUESTION,
} from '../../src/invalidation/purge-confirmation.js';
import { changeConfirmed, type Change } from '../../src/policy/changes.js';

const PATHS = { script: '/w/index.php', articlePath: '/wiki/$1', uploadPath: '/w/images' };
const NOW = Date.parse('2026-11-30T06:00:00Z');
const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('a PURGE of ?title=<non-ASCII>&action=history', () => {
  it('names the page by its UTF-8 title', () => {
    const title = '漢'.repeat(45);
    const url = `http://wiki/w/index.php?title=${encodeURIComponent(title)}&action=history`;
    expect(purgedTitle(url, PATHS)).toBe(title);
    expect(purgedTitle(`http://wiki/w/index.php?title=Caf%C3%A9_au_lait`, PATHS)).toBe('Café au lait');
  });
});

/** Confirmations against a wiki that answers as MediaWiki does: a title over 255 bytes is invalid. */
function confirmations() {
  const applied: Change[] = [];
  const questions: string[][] = [];
  const c = new PurgeConfirmations({
    ask: async (titles) => {
      questions.push([...titles]);
      return pagesOfAnswer({
        curtimestamp: new Date(NOW).toISOString(),
        query: {
          pages: titles.map((title) =>
            utf8Bytes(title) > 255 ? { title, invalidreason: 'The requested page title is too long.', invalid: true } : { ns: 0, title, missing: true },
          ),
        },
      });
    },
    askDeletions: async () => ({ titles: new Set(), truncated: false }),
    confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, undefined, onlyStatements, pageId, existence),
    apply: async (list) => {
      applied.push(...list);
    },
    log: pino({ level: 'silent' }),
  });
  return { c, applied, questions };
}

describe('the confirmation of a title the wiki calls invalid', () => {
  it('changes nothing', async () => {
    const { c, applied } = confirmations();
    void c.note('æ¼¢'.repeat(45));
    await c.settled();
    expect(applied.flatMap((a) => a.tags)).not.toContain('*');
  });

  it('pagesOfAnswer reports it as invalid, as asked', () => {
    const a = pagesOfAnswer({ curtimestamp: '2026-11-30T06:00:00Z', query: { pages: [{ title: 'A|B', invalidreason: 'x', invalid: true }] } });
    expect(a.invalid).toEqual(['A|B']);
    expect(a.pages).toEqual([]);
  });
});

describe('questions about many long titles', () => {
  it('each URL stays within QUESTION_TITLE_CHARS of titles, and every title is asked', async () => {
    const { c, questions } = confirmations();
    const titles = Array.from({ length: 2 * TITLES_PER_QUESTION }, (_, i) => `${'漢'.repeat(84)}${i % 10}${Math.floor(i / 10)}`);
    for (const t of titles) void c.note(t);
    await c.settled();
    expect(questions.flat().sort()).toEqual([...titles].sort());
    for (const q of questions) expect(confirmationQuery(q).length).toBeLessThan(QUESTION_TITLE_CHARS + 200);
    // More questions than TITLES_PER_QUESTION alone would have made.
    expect(questions.length).toBeGreaterThan(2);
  });

  it('a single title longer than the budget is still asked, alone', async () => {
    const { c, questions } = confirmations();
    // 4,500 characters encoded: more than one question's budget on its own.
    const long = '漢'.repeat(500);
    void c.note(long);
    void c.note('Short');
    await c.settled();
    expect(questions.flat().sort()).toEqual([long, 'Short'].sort());
  });
});

// The page a PURGE names that exists and changed: the control.
describe('a title the wiki answers about', () => {
  it('a page just created still confirms its change', async () => {
    const applied: Change[] = [];
    const c = new PurgeConfirmations({
      ask: async (titles) => ({
        pages: titles.map((title): PageNow => ({ title, missing: false, revid: 5, parentid: 0, revisionAt: NOW - 100 })),
        now: NOW,
      }),
      confirmed: (title, onlyStatements, pageId, existence) => changeConfirmed(title, undefined, onlyStatements, pageId, existence),
      apply: async (list) => {
        applied.push(...list);
      },
      log: pino({ level: 'silent' }),
    });
    void c.note('漢字');
    await c.settled();
    expect(applied.flatMap((a) => a.tags)).toContain('*');
  });
});
