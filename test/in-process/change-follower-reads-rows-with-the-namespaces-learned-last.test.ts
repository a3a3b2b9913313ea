// The follower read the wiki's namespaces once, at its start, and named every row's page with
// them for as long as it ran; the gateway learns them again every 10 minutes
// (upstream/site-namespaces.ts), and request tagging used those. A namespace the wiki gained
// meanwhile (WikibaseLexeme installed, its namespace Lex, 3000) was unknown to the follower:
// its rows named a page in the main namespace and no entity type, so lexeme searches stayed
// stale. The follower now reads the namespaces learned last at each poll.
import { describe, expect, it } from 'vitest';
import { namespacesFromSiteinfo, type Namespaces } from '../../src/mediawiki/titles.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const withLexemes = namespacesFromSiteinfo({
  namespaces: {
    '0': { id: 0, name: '' },
    '2': { id: 2, name: 'User', canonical: 'User' },
    '3000': { id: 3000, name: 'Lex', canonical: 'Lex', defaultcontentmodel: 'wikibase-lexeme' },
  },
});

describe('a namespace the wiki gained after the follower started', () => {
  const { wiki, follow } = followerOnFakeWiki();

  it('its rows carry its entity type', async () => {
    // Until the gateway learns them again, the ones the follower read at its start.
    const learned: { latest?: Namespaces } = {};
    const f = follow({ latestNamespaces: () => learned.latest! });
    await f.follower.pollOnce();
    learned.latest = withLexemes;
    wiki.clock += 1_000;
    f.now += 1_000;
    wiki.add('Lex:L1', { ns: 3000 });
    await f.follower.pollOnce();
    expect(f.appliedTags.at(-1)).toEqual(expect.arrayContaining(['p:Lex:L1', 't:lexeme']));
  });
});
