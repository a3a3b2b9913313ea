// The purge channel on a Redis Cluster is one connection to the master that owns its slot
// (src/cache/redis/shard-channel.ts). When that master refused the SSUBSCRIBE (CLUSTERDOWN while
// the cluster recovers, MOVED from a stale slot map after a resharding, an ACL), the channel only
// reported the error: its connection stayed open, 'connecting' for good, and no retry was ever
// made, so the replica never again heard other replicas' purges while the tier said it was up.
// A stand-in master here refuses the first SSUBSCRIBE and takes the next.
import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import { ShardChannel, slotOf } from '../../src/cache/redis/shard-channel.js';
import { bulk, respServer } from '../support/resp-server.js';
import { until } from '../support/until.js';

const CHANNEL = 'wikiedge:purge';
let subscribes = 0;

const master = respServer((socket, cmd, args) => {
  if (cmd === 'info') socket.write(bulk('# Server\r\nredis_version:7.0.15\r\nloading:0\r\n'));
  else if (cmd === 'ssubscribe') {
    subscribes++;
    // The first is refused, as a master answers while its cluster is not ok yet.
    if (subscribes === 1) socket.write('-CLUSTERDOWN The cluster is down\r\n');
    else socket.write(`*3\r\n${bulk('ssubscribe')}${bulk(args[0]!)}:1\r\n`);
  } else socket.write('+OK\r\n');
});

it('is made again when the master refused it, until it is taken', async () => {
  // A cluster client as the channel reads it: the slot map, and 'ready'.
  const slots: string[][] = [];
  slots[slotOf(CHANNEL)] = [`127.0.0.1:${master.port}`];
  const cluster = Object.assign(new EventEmitter(), { slots, refreshSlotsCache: () => undefined });
  const channel = new ShardChannel(cluster as never, { connectionName: 'wikiedge-sub' });
  const errors: string[] = [];
  let ready = 0;
  channel.on('error', (err: Error) => errors.push(err.message));
  channel.on('ready', () => ready++);
  try {
    await channel.subscribe(CHANNEL);
    await until(
      async () => ({ ready, status: channel.status, subscribes, connections: master.connections, errors }),
      (s) => s.ready === 1 && s.status === 'ready',
      10_000,
    );
    expect(errors.some((e) => e.includes('CLUSTERDOWN'))).toBe(true);
    expect(subscribes).toBe(2);
    expect(master.connections).toBe(2);
  } finally {
    channel.disconnect();
  }
}, 20_000);
