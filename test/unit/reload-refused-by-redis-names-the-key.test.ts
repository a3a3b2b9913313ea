// A reload of the single process whose new gateway Redis refuses (the new settings reach a
// replica, a Sentinel, a cluster node: src/cache/redis/server-check.ts RedisRefusal) logs the
// configuration key to set as `key`, as a reload refused for an invalid configuration does
// (src/cluster/reload.ts reloadOnSighup): the message named it, no field did.
import { describe, expect, it } from 'vitest';
import { RedisRefusal } from '../../src/cache/redis/server-check.js';
import { gatewayNotBuilt } from '../../src/cluster/reload.js';

describe('a reload whose new gateway could not be built', () => {
  it('names the key Redis refused, as a field', () => {
    const refusal = new RedisRefusal('WIKIEDGE_REDIS_SENTINELS', 'WIKIEDGE_REDIS_URL reaches a Redis Sentinel (INFO says redis_mode:sentinel)');
    expect(gatewayNotBuilt(refusal, ['WIKIEDGE_REDIS_URL'])).toEqual({
      level: 'error',
      fields: {
        key: 'WIKIEDGE_REDIS_SENTINELS',
        err: 'RedisRefusal: WIKIEDGE_REDIS_URL reaches a Redis Sentinel (INFO says redis_mode:sentinel)',
        changed: ['WIKIEDGE_REDIS_URL'],
      },
      msg: 'reload failed: the new gateway could not be built; the old configuration keeps serving',
    });
  });

  it('names no key for a failure that has none', () => {
    expect(gatewayNotBuilt(new Error('EMFILE'), []).fields).toEqual({ err: 'Error: EMFILE', changed: [] });
  });
});
