// An admin purge's count of the other replicas (src/cache/redis/replica-acks.ts replicaCount):
// arithmetic over the ids expected and the acknowledgements read from Redis, nothing else.
import { describe, expect, it } from 'vitest';
import { MAX_REPLICAS, replicaCount } from '../../src/cache/redis/replica-acks.js';

describe('replicaCount', () => {
  it('sums what each replica answered and leaves the purger out', () => {
    expect(replicaCount('self00000000', ['self00000000', 'aaaaaaaaaaaa', 'bbbbbbbbbbbb'], { aaaaaaaaaaaa: '3', bbbbbbbbbbbb: '4' })).toEqual({
      answered: 2,
      expected: 2,
      purged: 7,
      missing: [],
    });
  });

  it('names the expected replicas that did not answer', () => {
    expect(replicaCount('self00000000', ['aaaaaaaaaaaa', 'bbbbbbbbbbbb', 'cccccccccccc'], { bbbbbbbbbbbb: '1' })).toEqual({
      answered: 1,
      expected: 3,
      purged: 1,
      missing: ['aaaaaaaaaaaa', 'cccccccccccc'],
    });
  });

  it('counts a replica that answered without being expected (it started meanwhile)', () => {
    expect(replicaCount('self00000000', [], { dddddddddddd: '2' })).toEqual({ answered: 1, expected: 0, purged: 2, missing: [] });
  });

  it('reads an unreadable count as 0, and names at most MAX_REPLICAS', () => {
    const many = Array.from({ length: MAX_REPLICAS + 10 }, (_, i) => i.toString(16).padStart(12, '0'));
    const count = replicaCount('self00000000', many, { [many[0]!]: 'x' });
    expect(count.purged).toBe(0);
    expect(count.answered).toBe(1);
    expect(count.missing).toHaveLength(MAX_REPLICAS);
  });
});
