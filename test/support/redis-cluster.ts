// A throw-away Redis Cluster for a test: 3 masters with one replica each, from Debian's
// redis-server (`--cluster-enabled yes`), joined by `redis-cli --cluster create ...
// --cluster-replicas 1 --cluster-yes`, on free loopback ports (never 6379). Every process is
// started here and stopped by its pid. Ready once every node says `cluster_state:ok` and the
// cluster has three masters, each with a replica in sync.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { type RedisProcess, startServer } from './redis-topology.js';

const run = promisify(execFile);
const REDIS_CLI = process.env['WIKIEDGE_TEST_REDIS_CLI'] ?? '/usr/bin/redis-cli';

export interface TestCluster {
  readonly nodes: readonly RedisProcess[];
  /** `host:port,...` of every node, as WIKIEDGE_REDIS_CLUSTER_NODES takes them. */
  readonly seeds: string;
  /** The masters now (ports), as the cluster says. */
  masters(): Promise<number[]>;
  /** Per master port: how many keys it holds. */
  keysPerMaster(): Promise<Map<number, number>>;
  /** The port of the master that owns `slot` now. */
  ownerOf(slot: number): Promise<number>;
  /** Wait until every node still running says cluster_state:ok and there are 3 masters. */
  settled(boundMs?: number): Promise<void>;
  /** INFO commandstats summed over the masters: calls per command name. */
  commandStats(): Promise<Map<string, number>>;
  /** Every node killed (SIGKILL): the whole shared tier gone. */
  kill(): Promise<void>;
  /** Every node started again (its nodes.conf kept: the same cluster, empty), and settled. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** One command on one node, its answer as text (a short-lived client: answers of any length). */
async function ask(port: number, line: string): Promise<string> {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 2_000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const [name, ...args] = line.split(' ');
    return String(await c.call(name!, ...args));
  } finally {
    c.disconnect();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `cluster nodes` lines of one node: [id, address, flags, master id, ..., slots...]. */
async function clusterNodes(port: number): Promise<string[][]> {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const text = (await c.call('CLUSTER', 'NODES')) as string;
    return text
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
  } finally {
    c.disconnect();
  }
}

export async function startCluster(options: { nodeTimeoutMs?: number } = {}): Promise<TestCluster> {
  const nodeTimeout = String(options.nodeTimeoutMs ?? 1_000);
  const nodes: RedisProcess[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      nodes.push(
        await startServer([
          '--cluster-enabled',
          'yes',
          // Its own file in the scratch folder the server runs in (startServer's --dir).
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          nodeTimeout,
          // A replica takes over however long it was cut off (the test kills masters on purpose).
          '--cluster-replica-validity-factor',
          '0',
        ]),
      );
    }
    await run(REDIS_CLI, ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    throw err;
  }
  const alive = () => nodes.filter((n) => n.pid !== undefined);
  const cluster: TestCluster = {
    nodes,
    seeds: nodes.map((n) => n.address).join(','),
    async masters() {
      const lines = await clusterNodes(alive()[0]!.port);
      return lines.filter((l) => l[2]!.includes('master') && !l[2]!.includes('fail') && l.length > 8).map((l) => Number(l[1]!.split(':')[1]!.split('@')[0]));
    },
    async keysPerMaster() {
      const out = new Map<number, number>();
      for (const port of await cluster.masters()) out.set(port, Number(await ask(port, 'DBSIZE')));
      return out;
    },
    async ownerOf(slot) {
      const lines = await clusterNodes(alive()[0]!.port);
      for (const l of lines) {
        if (!l[2]!.includes('master') || l[2]!.includes('fail')) continue;
        for (const range of l.slice(8)) {
          const [a, b] = range.split('-').map(Number);
          if (slot >= a! && slot <= (b ?? a!)) return Number(l[1]!.split(':')[1]!.split('@')[0]);
        }
      }
      throw new Error(`no master owns slot ${slot}`);
    },
    async settled(boundMs = 60_000) {
      const deadline = Date.now() + boundMs;
      for (;;) {
        let ok = false;
        try {
          const states = await Promise.all(alive().map((n) => ask(n.port, 'CLUSTER INFO')));
          ok = states.every((s) => s.includes('cluster_state:ok')) && (await cluster.masters()).length === 3;
          if (ok) {
            // Every master has a replica that finished its first sync.
            const roles = await Promise.all((await cluster.masters()).map((p) => ask(p, 'INFO replication')));
            ok = roles.every((r) => /slave0:.*state=online/.test(r));
          }
        } catch {
          ok = false;
        }
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`the cluster did not settle within ${boundMs} ms`);
        await sleep(100);
      }
    },
    async commandStats() {
      const out = new Map<string, number>();
      for (const port of await cluster.masters()) {
        const text = await ask(port, 'INFO commandstats');
        for (const m of text.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) out.set(m[1]!, (out.get(m[1]!) ?? 0) + Number(m[2]));
      }
      return out;
    },
    async kill() {
      await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    },
    async restart() {
      await Promise.all(nodes.map((n) => n.restart()));
      await cluster.settled();
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.kill('SIGTERM')));
    },
  };
  try {
    await cluster.settled();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}
