// A throw-away redis-server for a test: started as a child process on a free port (never the
// machine's own Redis on 6379), without persistence, stopped by its pid. And, for unit tests, the
// tier's connection (src/cache/redis/connection.ts) over a fake client, with its log and metrics.
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import { createServer, connect } from 'node:net';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { RedisConnection } from '../../src/cache/redis/connection.js';
import { RedisTier } from '../../src/cache/redis-tier.js';
import { RedisMetrics } from '../../src/observe/metrics.js';

const REDIS_SERVER = process.env['WIKIEDGE_TEST_REDIS_SERVER'] ?? '/usr/bin/redis-server';

export interface TestRedis {
  readonly port: number;
  readonly url: string;
  /** The running server's pid (undefined while stopped). */
  readonly pid: number | undefined;
  /** Kill it (SIGKILL by default: a crash, not a shutdown) and wait until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again on the same port (empty: no persistence). */
  restart(): Promise<void>;
  /** Send one inline command and return the raw reply (for SIGSTOP-free checks like DBSIZE). */
  command(line: string): Promise<string>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function rawCommand(port: number, line: string, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis on ${port}: no answer to ${line}`));
    }, timeoutMs);
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('connect', () => socket.write(`${line}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      if (data.endsWith('\r\n')) {
        clearTimeout(timer);
        socket.end();
        resolve(data);
      }
    });
  });
}

/**
 * Where a server would write its RDB file: none is saved (`--save ''`), but a replica writes the
 * one its primary sends at a full sync (test/in-process/reload-of-workers-refused-by-redis-names-the-key.test.ts
 * makes one), and in the working directory it would land in the repository. Removed when it stops.
 */
function rdbFile(port: number): string {
  return path.join(tmpdir(), `wikiedge-test-redis-${port}.rdb`);
}

function startProcess(port: number): ChildProcess {
  const rdb = rdbFile(port);
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no'];
  const child = spawn(REDIS_SERVER, [...args, '--dir', path.dirname(rdb), '--dbfilename', path.basename(rdb)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Keep the pipes drained; the output is only wanted when something goes wrong.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

export async function waitUntilAnswering(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited with ${child.exitCode}`);
    try {
      // A server with requirepass answers, but NOAUTH.
      if (/^(\+PONG|-NOAUTH)/.test(await rawCommand(port, 'PING', 500))) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer within 10 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  if (port === 6379) throw new Error('refusing to use port 6379');
  let child: ChildProcess | undefined = startProcess(port);
  await waitUntilAnswering(port, child);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const c = child;
    if (!c?.pid) return;
    child = undefined;
    process.kill(c.pid, signal);
    await exited(c);
    rmSync(rdbFile(port), { force: true });
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    kill,
    async restart() {
      await kill('SIGTERM');
      const c = startProcess(port);
      child = c;
      await waitUntilAnswering(port, c);
    },
    command: (line) => rawCommand(port, line),
    stop: () => kill('SIGTERM'),
  };
}

/** The few client methods the connection uses; `ping` answers as `pingAnswer` says. */
export class FakeRedisClient extends EventEmitter {
  status = 'connecting';
  pingAnswer: 'now' | 'never' = 'now';
  ping(): Promise<string> {
    return this.pingAnswer === 'now' ? Promise.resolve('PONG') : new Promise<string>(() => undefined);
  }
  subscribe(): Promise<number> {
    return Promise.resolve(1);
  }
  /** What a plain Redis (neither a cluster node, a Sentinel nor a replica) says: src/cache/redis/server-check.ts. */
  info(): Promise<string> {
    return Promise.resolve('# Server\r\nredis_mode:standalone\r\n# Replication\r\nrole:master\r\n# Cluster\r\ncluster_enabled:0\r\n');
  }
  quit(): Promise<string> {
    return Promise.resolve('OK');
  }
  disconnect(): void {
    this.status = 'end';
  }
  connects = 0;
  connect(): Promise<void> {
    this.connects++;
    this.becomeReady();
    return Promise.resolve();
  }
  /** ioredis gives up on its own (its connector failed): status `end`, and the event. */
  end(): void {
    this.status = 'end';
    this.emit('end');
  }
  becomeReady(): void {
    this.status = 'ready';
    this.emit('ready');
  }
}

/** A RedisConnection over two fake clients (command, subscriber), still starting; close it after the test. */
export function fakeRedisConnection(timeoutMs: number) {
  const clients: FakeRedisClient[] = [];
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) });
  const registry = new Registry();
  const connection = new RedisConnection({
    url: 'redis://fake',
    timeoutMs,
    log,
    metrics: new RedisMetrics(registry),
    connect: () => {
      const c = new FakeRedisClient();
      clients.push(c);
      return c as unknown as Redis;
    },
  });
  const [cmd, sub] = clients as [FakeRedisClient, FakeRedisClient];
  connection.subscribe('wikiedge:purge', () => undefined);
  const values = async (name: string) => (await registry.getSingleMetric(name)!.get()).values;
  return {
    connection,
    cmd,
    sub,
    lines,
    /** wikiedge_redis_errors_total{op} */
    errors: async (op: string) => (await values('wikiedge_redis_errors_total')).find((v) => v.labels['op'] === op)!.value,
    /** wikiedge_redis_up */
    upGauge: async () => (await values('wikiedge_redis_up'))[0]!.value,
    /** A metric without labels (wikiedge_redis_down_total, ...). */
    value: async (name: string) => (await values(name))[0]!.value,
    /** How many `"redis":"up"` / `"down"` log lines. */
    states: (state: 'up' | 'down') => lines.filter((l) => l['redis'] === state).length,
    /** Both connections ready and the PING answered. */
    async up(): Promise<boolean> {
      cmd.becomeReady();
      sub.becomeReady();
      return connection.ready(1_000);
    },
  };
}

/**
 * A Redis tier of its own, with no gateway around it (its purge messages go nowhere): a replica
 * reduced to its tier, to play the steps of a race by hand. `options` override the defaults.
 */
export function bareRedisTier(url: string, options: Partial<ConstructorParameters<typeof RedisTier>[0]> = {}): RedisTier {
  return new RedisTier({
    url,
    timeoutMs: 500,
    lockMs: 1_000,
    keyPrefix: 'wikiedge:',
    windows: { graceMs: 0, staleIfErrorMs: 0 },
    now: Date.now,
    log: pino({ level: 'silent' }),
    metrics: new RedisMetrics(new Registry()),
    onPurge: () => undefined,
    ...options,
  });
}
