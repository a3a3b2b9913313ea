// A reload that turns the change follower off ends what it vouched for with a `follower-off` gap
// in a single process (test/in-process/reload-that-stops-following-ends-the-followed-ttl.test.ts)
// and, with Redis, in every process started so (test/in-process/
// restart-without-the-follower-ends-the-followed-ttl-in-redis.test.ts). A cluster without Redis
// hands its workers' entries to new processes that cannot know they were stored under the
// followed TTL: that reload says so, with what to do (src/cluster/reload.ts followerOffUncovered).
import { describe, expect, it } from 'vitest';
import { loadConfigWithOrigins } from '../../src/config/config.js';
import { followerOffUncovered } from '../../src/cluster/reload.js';

const base = { WIKIEDGE_UPSTREAM: 'http://wiki:80', WIKIEDGE_IDENTITY_SECRET: 'a-secret-shared-by-every-replica' };
const load = (env: Record<string, string> = {}) => loadConfigWithOrigins({ ...base, ...env }).config;

describe('followerOffUncovered', () => {
  it('workers without Redis, the follower turned off: a warning naming the TTL and the purge', () => {
    const warning = followerOffUncovered(load({ WIKIEDGE_WORKERS: '2', WIKIEDGE_RC_FOLLOW: 'true' }), load({ WIKIEDGE_WORKERS: '2' }));
    expect(warning).toContain('WIKIEDGE_RC_FOLLOW turned off');
    expect(warning).toContain('up to 3600 s');
    expect(warning).toContain('POST /purge?all=1');
  });

  it.each([
    ['one process (its reload takes the gap)', { WIKIEDGE_RC_FOLLOW: 'true' }, {}],
    [
      'workers with Redis (each new worker takes the gap)',
      { WIKIEDGE_WORKERS: '2', WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_REDIS_URL: 'redis://r:6379' },
      { WIKIEDGE_WORKERS: '2', WIKIEDGE_REDIS_URL: 'redis://r:6379' },
    ],
    ['the follower kept on', { WIKIEDGE_WORKERS: '2', WIKIEDGE_RC_FOLLOW: 'true' }, { WIKIEDGE_WORKERS: '2', WIKIEDGE_RC_FOLLOW: 'true' }],
    ['the follower never on', { WIKIEDGE_WORKERS: '2' }, { WIKIEDGE_WORKERS: '2' }],
  ])('%s: nothing to say', (_name, before, after) => {
    expect(followerOffUncovered(load(before), load(after))).toBeUndefined();
  });
});
