// Shards of a Redis Cluster are labelled by index in the order of the first slot each master owns
// (src/cache/redis/cluster-watch.ts): bounded, and the same shard keeps its label when its replica
// is promoted, so a failover shows as the same series going down and up again.
import { describe, expect, it } from 'vitest';
import { MAX_SHARD_LABELS, shardLabel, shardMasters } from '../../src/cache/redis/cluster-watch.js';

/** A slot map as ioredis keeps it: per slot, [master, replicas...]. */
function slotMap(ranges: [number, number, string, string][]): string[][] {
  const slots: string[][] = [];
  for (const [from, to, master, replica] of ranges) for (let s = from; s <= to; s++) slots[s] = [master, replica];
  return slots;
}

describe('shard labels', () => {
  it('index by the first slot owned, whatever the node order; a promoted replica takes its master’s index', () => {
    const before = slotMap([
      [0, 5460, 'n3:7002', 'n4:7003'],
      [5461, 10922, 'n1:7000', 'n5:7004'],
      [10923, 16383, 'n2:7001', 'n6:7005'],
    ]);
    expect(shardMasters(before)).toEqual(['n3:7002', 'n1:7000', 'n2:7001']);
    const after = slotMap([
      [0, 5460, 'n3:7002', 'n4:7003'],
      [5461, 10922, 'n5:7004', 'n1:7000'],
      [10923, 16383, 'n2:7001', 'n6:7005'],
    ]);
    expect(shardMasters(after)).toEqual(['n3:7002', 'n5:7004', 'n2:7001']);
  });

  it('a master owning two ranges is one shard; labels stop at MAX_SHARD_LABELS', () => {
    const slots = slotMap([
      [0, 99, 'a:1', 'x:1'],
      [100, 199, 'b:1', 'y:1'],
      [200, 299, 'a:1', 'x:1'],
    ]);
    expect(shardMasters(slots)).toEqual(['a:1', 'b:1']);
    expect(shardLabel(0)).toBe('0');
    expect(shardLabel(MAX_SHARD_LABELS - 1)).toBe(String(MAX_SHARD_LABELS - 1));
    expect(shardLabel(MAX_SHARD_LABELS)).toBe('other');
    expect(shardLabel(-1)).toBe('other');
  });
});
