// Throw-away Redis topologies for a test, on free loopback ports (never 6379), each process
// started here and stopped by its pid: a server with any extra arguments (a replica, a cluster
// node), and Sentinels (`redis-server <file> --sentinel`, the Debian package has no separate
// redis-sentinel binary) watching a primary.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { exited, freePort, waitUntilAnswering } from './redis.js';
import { scratchDir } from './scratch.js';

const REDIS_SERVER = process.env['WIKIEDGE_TEST_REDIS_SERVER'] ?? '/usr/bin/redis-server';

export interface RedisProcess {
  readonly port: number;
  readonly address: string;
  /** The running server's pid, undefined once it is stopped. */
  readonly pid: number | undefined;
  /** Signal it (SIGKILL: a crash) and wait until it is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again, stopped first if running: same port, same arguments, same folder. */
  restart(): Promise<void>;
}

async function startProcess(args: (port: number) => string[]): Promise<RedisProcess> {
  const port = await freePort();
  if (port === 6379) throw new Error('refusing to use port 6379');
  const argv = args(port);
  const spawnIt = async () => {
    const c = spawn(REDIS_SERVER, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout?.resume();
    c.stderr?.resume();
    await waitUntilAnswering(port, c);
    return c;
  };
  let child: ChildProcess | undefined = await spawnIt();
  const process_: RedisProcess = {
    port,
    address: `127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      const c = child;
      if (!c?.pid) return;
      child = undefined;
      // Already gone by itself (SHUTDOWN NOSAVE): nothing to signal.
      if (c.exitCode === null && c.signalCode === null) process.kill(c.pid, signal);
      await exited(c);
    },
    async restart() {
      await process_.kill('SIGTERM');
      child = await spawnIt();
    },
  };
  return process_;
}

/** A redis-server without persistence, with `extra` arguments (`--replicaof`, `--cluster-enabled yes`, ...). */
export function startServer(extra: string[] = []): Promise<RedisProcess> {
  const dir = scratchDir('wikiedge-redis-');
  return startProcess((port) => [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
    '--dir',
    dir,
    ...extra,
  ]);
}

export interface SentinelTiming {
  readonly downAfterMs: number;
  readonly failoverTimeoutMs: number;
}

/** A Sentinel monitoring `primary` as `name` (quorum 2). Its file is rewritten by it, in a scratch folder. */
export function startSentinel(
  name: string,
  primary: RedisProcess,
  timing: SentinelTiming = { downAfterMs: 1_000, failoverTimeoutMs: 5_000 },
  /** More lines of its file (`requirepass ...`, `sentinel auth-pass <name> ...`). */
  extra: string[] = [],
): Promise<RedisProcess> {
  const dir = scratchDir('wikiedge-sentinel-');
  return startProcess((port) => {
    const file = path.join(dir, 'sentinel.conf');
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        'daemonize no',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${name} ${timing.downAfterMs}`,
        `sentinel failover-timeout ${name} ${timing.failoverTimeoutMs}`,
        `sentinel parallel-syncs ${name} 1`,
        ...extra,
        '',
      ].join('\n'),
    );
    return [file, '--sentinel'];
  });
}

/** A client for looking at a server or a Sentinel from the test; disconnect it after. */
export async function inspector(port: number): Promise<Redis> {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

export interface TestSentinelSet {
  /** The name the Sentinels monitor the primary under (WIKIEDGE_REDIS_SENTINEL_MASTER). */
  readonly name: string;
  readonly primary: RedisProcess;
  readonly replica: RedisProcess;
  readonly sentinels: readonly RedisProcess[];
  /** The Sentinels' `host:port,...`, as WIKIEDGE_REDIS_SENTINELS takes them. */
  readonly seeds: string;
  /** Every process killed (SIGKILL): the whole shared tier, Sentinels included, gone. */
  kill(): Promise<void>;
  /** Every process started again (primary, replica, then the Sentinels from their rewritten files), and agreed. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Until the Sentinels know each other and the replica: only then can two agree and one fail over. */
async function sentinelsAgree(name: string, sentinel: RedisProcess, boundMs = 30_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    let ok = false;
    try {
      const s = await inspector(sentinel.port);
      try {
        const quorum = await s.call('SENTINEL', 'ckquorum', name).then(String, (e: Error) => e.message);
        const replicas = (await s.call('SENTINEL', 'replicas', name)) as unknown[];
        ok = quorum.includes('3 usable Sentinels') && replicas.length === 1;
      } finally {
        s.disconnect();
      }
    } catch {
      ok = false;
    }
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`the Sentinels of ${name} did not agree within ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A primary, one replica and three Sentinels (quorum 2) watching it as `name`, agreed.
 * `primaryArgs`: more arguments for the first primary only (startServer).
 */
export async function startSentinelSet(name = 'wikiedge-test', timing?: SentinelTiming, primaryArgs: string[] = []): Promise<TestSentinelSet> {
  const started: RedisProcess[] = [];
  try {
    const primary = await startServer(primaryArgs);
    started.push(primary);
    const replica = await startServer(['--replicaof', '127.0.0.1', String(primary.port)]);
    started.push(replica);
    const sentinels = await Promise.all([0, 1, 2].map(() => startSentinel(name, primary, timing)));
    started.push(...sentinels);
    await sentinelsAgree(name, sentinels[0]!);
    const set: TestSentinelSet = {
      name,
      primary,
      replica,
      sentinels,
      seeds: sentinels.map((s) => s.address).join(','),
      async kill() {
        await Promise.all(started.map((p) => p.kill('SIGKILL')));
      },
      async restart() {
        await primary.restart();
        await replica.restart();
        await Promise.all(sentinels.map((s) => s.restart()));
        await sentinelsAgree(name, sentinels[0]!);
      },
      async stop() {
        await Promise.all(started.map((p) => p.kill('SIGTERM')));
      },
    };
    return set;
  } catch (err) {
    await Promise.all(started.map((p) => p.kill('SIGKILL')));
    throw err;
  }
}
