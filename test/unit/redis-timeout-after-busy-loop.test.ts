// A Redis call's timeout means Redis did not answer, not that this process was busy: when the
// event loop was blocked past the bound while the reply came in, the reply wins (the verdict
// waits one loop turn, src/cache/redis/connection.ts). Without that, Node runs the expired timer
// before it reads the socket, and the tier is marked down with Redis answering in time.
import { once } from 'node:events';
import { type Server, type Socket, createServer, connect } from 'node:net';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { RedisConnection } from '../../src/cache/redis/connection.js';
import { fakeRedisConnection } from '../support/redis.js';

const TIMEOUT_MS = 20;

let server: Server;
let client: Socket;
let peer: Socket;
let connection: RedisConnection | undefined;

beforeEach(async () => {
  server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  const accepted = once(server, 'connection');
  client = connect({ host: '127.0.0.1', port });
  await once(client, 'connect');
  [peer] = (await accepted) as [Socket];
  // A reset as either end is destroyed must not become an uncaught error (it fails the run).
  client.on('error', () => undefined);
  peer.on('error', () => undefined);
});
afterEach(async () => {
  client.destroy();
  peer.destroy();
  server.close();
  await connection?.close();
});

/** Block the event loop, as a burst of requests on a loaded host does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

it('a reply that arrived while the loop was blocked past the bound is a success, and the tier stays up', async () => {
  const s = fakeRedisConnection(TIMEOUT_MS);
  connection = s.connection;
  expect(await s.up()).toBe(true);
  const result = s.connection.call('get', () => {
    const reply = once(client, 'data').then(([chunk]) => String(chunk));
    // The other end answers at once: the reply is in this socket before the loop is blocked.
    peer.write('+PONG\r\n');
    return reply;
  });
  busy(TIMEOUT_MS * 4);
  expect(await result).toEqual({ ok: true, value: '+PONG\r\n' });
  expect(s.connection.up).toBe(true);
  expect(await s.errors('get')).toBe(0);
  expect(s.states('down')).toBe(0);
});

it('a reply that had not come when the loop looked is still a timeout', async () => {
  const s = fakeRedisConnection(TIMEOUT_MS);
  connection = s.connection;
  expect(await s.up()).toBe(true);
  const result = s.connection.call('get', () => once(client, 'data').then(([chunk]) => String(chunk)));
  busy(TIMEOUT_MS * 4);
  expect(await result).toEqual({ ok: false });
  // Counted as a timeout (one alone leaves the tier up: connection.ts TIMEOUTS_BEFORE_DOWN).
  expect(await s.errors('get')).toBe(1);
  expect(s.lines.filter((l) => l['redis'] === 'down')).toEqual([]);
  peer.write('+PONG\r\n');
});
