// The purge channel on a Redis Cluster is one connection to the master that owns its slot
// (src/cache/redis/shard-channel.ts). When that master refused the SSUBSCRIBE (CLUSTERDOWN while
// the cluster recovers, MOVED from a stale slot map after a resharding, an ACL), the channel only
// reported the error: its connection stayed open, 'connecting' for good, and no retry was ever
// made, so the replica never again heard other replicas' purges while the tier said it was up.
// A stand-in master here refuses the first SSUBSCRIBE and takes the next.
import { EventEmitter } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ShardChannel, slotOf } from '../../src/cache/redis/shard-channel.js';
import { until } from '../support/until.js';

const CHANNEL = 'wikiedge:purge';
let server: Server;
let port = 0;
let subscribes = 0;
let connections = 0;
const sockets = new Set<Socket>();

/** RESP commands out of a buffer: arrays of bulk strings (what ioredis sends). */
function commands(buf: string): string[][] {
  const out: string[][] = [];
  const lines = buf.split('\r\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.startsWith('*')) continue;
    const n = Number(lines[i]!.slice(1));
    const args: string[] = [];
    for (let k = 0; k < n; k++) args.push(lines[i + 2 + 2 * k] ?? '');
    out.push(args);
    i += 2 * n;
  }
  return out;
}

const bulk = (s: string) => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

beforeAll(async () => {
  server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (data) => {
      for (const [name, ...args] of commands(data.toString('utf8'))) {
        const cmd = name!.toLowerCase();
        if (cmd === 'info') socket.write(bulk('# Server\r\nredis_version:7.0.15\r\nloading:0\r\n'));
        else if (cmd === 'ssubscribe') {
          subscribes++;
          // The first is refused, as a master answers while its cluster is not ok yet.
          if (subscribes === 1) socket.write('-CLUSTERDOWN The cluster is down\r\n');
          else socket.write(`*3\r\n${bulk('ssubscribe')}${bulk(args[0]!)}:1\r\n`);
        } else socket.write('+OK\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => server.close(resolve));
});

it('is made again when the master refused it, until it is taken', async () => {
  // A cluster client as the channel reads it: the slot map, and 'ready'.
  const slots: string[][] = [];
  slots[slotOf(CHANNEL)] = [`127.0.0.1:${port}`];
  const cluster = Object.assign(new EventEmitter(), { slots, refreshSlotsCache: () => undefined });
  const channel = new ShardChannel(cluster as never, { connectionName: 'wikiedge-sub' });
  const errors: string[] = [];
  let ready = 0;
  channel.on('error', (err: Error) => errors.push(err.message));
  channel.on('ready', () => ready++);
  try {
    await channel.subscribe(CHANNEL);
    await until(
      async () => ({ ready, status: channel.status, subscribes, connections, errors }),
      (s) => s.ready === 1 && s.status === 'ready',
      10_000,
    );
    expect(errors.some((e) => e.includes('CLUSTERDOWN'))).toBe(true);
    expect(subscribes).toBe(2);
    expect(connections).toBe(2);
  } finally {
    channel.disconnect();
  }
}, 20_000);
