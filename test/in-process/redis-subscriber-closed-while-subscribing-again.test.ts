// The purge channel's connection closed while its SUBSCRIBE after a reconnect is unanswered (a
// gateway stopping, or a reload, just as Redis came back): nothing may reject unhandled, which in
// production ends the Node process. ioredis' own re-subscription on 'ready' (autoResubscribe,
// readyHandler in ioredis' built/redis/event_handler.js) sends SUBSCRIBE without a handler for its
// rejection, and close() rejects it with "Connection is closed."; the connection re-subscribes
// itself instead (src/cache/redis/connection.ts subscriberUp), with the rejection handled.
//
// The server is a few lines of RESP over a socket, so that the moment is exact: its first
// connections answer everything; once the subscriber has been dropped, SUBSCRIBE goes unanswered.
import type { Socket } from 'node:net';
import pino from 'pino';
import { Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { RedisConnection } from '../../src/cache/redis/connection.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { bulk, respServer } from '../support/resp-server.js';
import { until } from '../support/until.js';

const INFO = '# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n# Replication\r\nrole:master\r\n# Cluster\r\ncluster_enabled:0\r\n';

let answerSubscribe = true;
let subscribes = 0;
const subscribers = new Set<Socket>();

const redis = respServer((socket, name, args) => {
  switch (name) {
    case 'info':
      socket.write(bulk(INFO));
      break;
    case 'subscribe':
      subscribes++;
      subscribers.add(socket);
      if (answerSubscribe) socket.write(`*3\r\n${bulk('subscribe')}${bulk(args[0]!)}:1\r\n`);
      break;
    case 'quit':
      // Never answered either: close() gives up waiting and drops the connection.
      break;
    default:
      socket.write('+PONG\r\n');
  }
});

it('closing the connection while the purge channel is being subscribed again rejects nothing unhandled', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const connection = new RedisConnection({
      url: `redis://127.0.0.1:${redis.port}`,
      timeoutMs: 500,
      log: pino({ level: 'silent' }),
      metrics: new RedisMetrics(new Registry()),
    });
    connection.subscribe('wikiedge:purge', () => undefined);
    expect(await connection.ready(5_000)).toBe(true);
    // Redis "comes back": the subscriber's connection drops, the next SUBSCRIBE is not answered.
    answerSubscribe = false;
    const before = subscribes;
    for (const s of subscribers) s.destroy();
    await until(
      async () => subscribes,
      (n) => n > before,
      10_000,
    );
    await connection.close();
    // Rejections are reported after the microtasks that could still handle them.
    await new Promise((r) => setTimeout(r, 50));
    expect(unhandled.map(String)).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
