// A row dated in the wiki's future (a server whose clock runs ahead) is applied once with a
// `clock` gap, and the cursor never passes it: rows dated before it are still to come. When that
// server goes on writing, its next rows are dated after the first and listed after it: each poll
// stopped reading at the first, said it had read everything (lag 0, healthy) and vouched, while
// those rows waited unread until the wiki's clock reached the first one, up to the other server's
// lead: the answers they change were served stale under the followed TTL, with nothing in the
// health or the metrics. The rows after it are read and applied at once now, each once.
import { describe, expect, it } from 'vitest';
import type { FollowerUnderTest } from '../support/fake-recentchanges.js';
import { followerOnFakeWiki } from '../support/follower-on-fake-wiki.js';

const AHEAD_MS = 600_000;

describe('a server whose clock runs ahead, writing on', () => {
  const { wiki, follow } = followerOnFakeWiki();
  let f: FollowerUnderTest;
  const pass = (ms: number) => {
    wiki.clock += ms;
    f.now += ms;
  };

  it('its rows after the first are applied at once, each once, and rows dated now still are', async () => {
    f = follow({ unhealthyAfterMs: 10_000 });
    await f.follower.pollOnce();
    f.gaps.length = 0;
    pass(1_000);
    wiki.add('First from the server ahead', { at: wiki.clock + AHEAD_MS });
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock']);

    pass(1_000);
    wiki.add('Second from the server ahead', { at: wiki.clock + AHEAD_MS });
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead', 'Second from the server ahead']);
    expect(f.follower.healthy).toBe(true);

    // A row dated now, listed before them, and nothing applied twice.
    pass(1_000);
    wiki.add('Now');
    await f.follower.pollOnce();
    pass(1_000);
    await f.follower.pollOnce();
    expect(f.applied).toEqual(['First from the server ahead', 'Second from the server ahead', 'Now']);
    expect(f.gaps.map((g) => g.reason)).toEqual(['clock', 'clock']);

    // The wiki's clock passes them: nothing applied again, no gap.
    pass(AHEAD_MS);
    await f.follower.pollOnce();
    expect(f.applied).toHaveLength(3);
    expect(f.gaps).toHaveLength(2);
    expect(f.follower.healthy).toBe(true);
  });
});
