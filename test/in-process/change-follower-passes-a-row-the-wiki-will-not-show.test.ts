// A page of list=recentchanges may hold no row and still a continuation: ApiQueryRecentChanges::run
// stops at a row an ApiQueryBaseProcessRow hook refuses (or one that does not fit the result) and
// sets the continuation at that very row, so asked from there it answers the same empty page
// again. The follower read an empty page as the end: it never passed that row, applied nothing
// after it, and went on vouching for every change (healthy, lag 0). Now such a row is a gap
// (what it changed no tag can name), taken once, and the follower goes on past it.
import { describe, expect, it } from 'vitest';
import { MemoryCursorStore } from '../../src/invalidation/follower.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

type OnFakeWiki = ReturnType<typeof followerOnFakeWiki>;
type Following = ReturnType<OnFakeWiki['follow']>;

/** A second passes for the wiki and the follower alike. */
function aSecondLater(wiki: OnFakeWiki['wiki'], f: Following): void {
  wiki.clock += 1_000;
  f.now += 1_000;
}

/**
 * A follower that has read to the newest row, then, a second later, a row `Before`, one a hook
 * hides, and the rows `after`.
 */
async function rowsAroundAHiddenOne({ wiki, follow }: OnFakeWiki, after: readonly string[]) {
  const f = follow();
  await f.follower.pollOnce();
  f.gaps.length = 0;
  aSecondLater(wiki, f);
  wiki.add('Before');
  const hidden = wiki.add('Hidden by a hook');
  for (const title of after) wiki.add(title);
  wiki.refuse = (row) => row.rcid === hidden.rcid;
  return { f, hidden };
}

describe('a row the wiki will not show', () => {
  const onWiki = followerOnFakeWiki();
  const { wiki } = onWiki;

  it('one gap for it, then the rows after it are applied, and it stays healthy', async () => {
    const { f } = await rowsAroundAHiddenOne(onWiki, ['After 1']);
    await f.follower.pollOnce();
    wiki.add('After 2');
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['Before', 'After 1', 'After 2']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['row-unreadable']);
    expect(f.follower.healthy).toBe(true);
    // Read again in the late window at later polls: no second gap.
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.gaps).toHaveLength(1);
  });
});

describe('a row the wiki will not show, then a page that fails', () => {
  const onWiki = followerOnFakeWiki();
  const { wiki } = onWiki;

  it('the row is seen once its gap is taken: the poll read again takes no second gap', async () => {
    const { f, hidden } = await rowsAroundAHiddenOne(onWiki, ['After']);
    // The page after the hidden row fails.
    wiki.failWhen = (q) => Number(q.get('rccontinue')?.split('|')[1] ?? 0) > hidden.rcid;
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['row-unreadable']);
    wiki.failWhen = () => false;
    aSecondLater(wiki, f);
    await f.follower.pollOnce();
    expect(f.gaps).toHaveLength(1);
    expect(f.applied).toEqual(['Before', 'After']);
  });
});

describe('a row the wiki will not show, where the follower starts or resumes', () => {
  const { wiki, follow } = followerOnFakeWiki();

  it('the newest row when it starts: the start`s gap covers it, no second gap', async () => {
    wiki.add('Older', { at: wiki.clock - 5_000 });
    const hidden = wiki.add('Hidden by a hook', { at: wiki.clock - 2_000 });
    wiki.refuse = (row) => row.rcid === hidden.rcid;
    const f = follow();
    await f.follower.pollOnce();
    aSecondLater(wiki, f);
    wiki.add('After');
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['cursor-lost']);
    expect(f.applied).toEqual(['After']);
  });

  it('the oldest row the wiki has when an old cursor resumes: read as the oldest, purged rows still found', async () => {
    const cursors = new MemoryCursorStore();
    const first = follow({ cursors });
    wiki.add('Seen');
    await first.follower.pollOnce();
    await first.close();
    // Rows since the cursor purged ($wgRCMaxAge), the oldest left hidden by a hook.
    wiki.clock += 91 * 86_400_000;
    wiki.remove(() => true);
    const hidden = wiki.add('Hidden by a hook', { at: wiki.clock - 60_000 });
    wiki.add('Recent');
    wiki.refuse = (row) => row.rcid === hidden.rcid;
    const f = follow({ cursors });
    await f.follower.pollOnce();
    expect(f.gaps.map((g) => g.reason)).toEqual(['rc-purged']);
  });
});
