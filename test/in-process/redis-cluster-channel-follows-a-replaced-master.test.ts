// The purge channel on a Redis Cluster is one connection to the master that owns its slot
// (src/cache/redis/shard-channel.ts). It looked for a new owner only when its connection ended or
// the master ended the subscription (a SUNSUBSCRIBE for a moved slot). A master stopped or cut
// off from its cluster but not from the gateway (SIGSTOP, a paused VM) does neither: the socket
// stays open while the cluster promotes its replica and the other replicas publish their purges
// there. The replica heard none of them again, and no gap was taken after the first. The
// cluster client reads the slot map every two seconds and emits `refresh`: a channel on a node
// the map no longer names is ended and subscribed again on the new owner.
import { EventEmitter } from 'node:events';
import { expect, it } from 'vitest';
import { ShardChannel, slotOf } from '../../src/cache/redis/shard-channel.js';
import { bulk, respServer } from '../support/resp-server.js';
import { until } from '../support/until.js';

const CHANNEL = 'wikiedge:purge';

/** A master that takes every SSUBSCRIBE and never ends a subscription by itself. */
function master() {
  let subscribes = 0;
  const server = respServer((socket, cmd, args) => {
    if (cmd === 'info') socket.write(bulk('# Server\r\nredis_version:7.0.15\r\nloading:0\r\n'));
    else if (cmd === 'ssubscribe') {
      subscribes++;
      socket.write(`*3\r\n${bulk('ssubscribe')}${bulk(args[0]!)}:1\r\n`);
    } else socket.write('+OK\r\n');
  });
  return {
    get port() {
      return server.port;
    },
    get subscribes() {
      return subscribes;
    },
  };
}

const old = master();
const promoted = master();

it('subscribes again on the master the refreshed slot map names', async () => {
  const slots: string[][] = [];
  slots[slotOf(CHANNEL)] = [`127.0.0.1:${old.port}`];
  const cluster = Object.assign(new EventEmitter(), { slots, refreshSlotsCache: () => undefined });
  const channel = new ShardChannel(cluster as never, { connectionName: 'wikiedge-sub' });
  const events: string[] = [];
  channel.on('ready', () => events.push('ready'));
  channel.on('close', () => events.push('close'));
  channel.on('error', () => undefined);
  try {
    await channel.subscribe(CHANNEL);
    expect(old.subscribes).toBe(1);
    // A refresh that names the same owner changes nothing.
    cluster.emit('refresh');
    // The cluster promoted the replica; the old master still holds the connection open.
    slots[slotOf(CHANNEL)] = [`127.0.0.1:${promoted.port}`];
    cluster.emit('refresh');
    await until(
      async () => ({ events: events.join(','), status: channel.status, promoted: promoted.subscribes }),
      (s) => s.promoted === 1 && s.status === 'ready',
      10_000,
    );
    // The loss is told (connection.ts takes a gap at a channel's close) before the new subscription.
    expect(events).toEqual(['ready', 'close', 'ready']);
    expect(old.subscribes).toBe(1);
  } finally {
    channel.disconnect();
  }
}, 20_000);
