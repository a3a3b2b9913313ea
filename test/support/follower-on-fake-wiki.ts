// One recentchanges stand-in for a whole describe block and the followers its tests start on it:
// the setup the change-follower tests share. The wiki listens from the block's first test to
// after its last, is as new again before each test, and the followers a test started are closed
// after it, also when it fails half-way.
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.js';
import { FakeRecentChanges, type FollowerSetup, type FollowerUnderTest, followerOf } from './fake-recentchanges.js';

export interface FollowerOnFakeWiki {
  /** The wiki: tests add rows, move its clock, take it down; usable at collection time. */
  readonly wiki: FakeRecentChanges;
  /** A follower polling the wiki, its clock starting at the wiki's unless `setup.now`. Call inside tests or hooks. */
  follow(setup?: FollowerSetup): FollowerUnderTest;
}

/** Call inside `describe`: registers the block's hooks and returns the wiki and a way to start followers on it. */
export function followerOnFakeWiki(): FollowerOnFakeWiki {
  const wiki = new FakeRecentChanges();
  let server: FakeUpstream | undefined;
  const started: FollowerUnderTest[] = [];
  beforeAll(async () => {
    server = await startFakeUpstream(wiki.handler);
  });
  afterAll(() => server?.close());
  beforeEach(() => wiki.reset());
  afterEach(async () => {
    await Promise.all(started.splice(0).map((f) => f.close()));
  });
  return {
    wiki,
    follow: (setup = {}) => {
      if (!server) throw new Error('followerOnFakeWiki: call `follow` inside a test or hook, after beforeAll');
      const f = followerOf(server.url, { now: wiki.clock, ...setup });
      started.push(f);
      return f;
    },
  };
}
