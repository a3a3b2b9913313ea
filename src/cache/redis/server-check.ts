/**
 * Is the Redis reached the kind the configuration says? A URL that reaches a Sentinel, a cluster
 * node or a replica would connect and answer PING, then fail (or misplace) every command: a tier
 * that flaps for ever, or shares nothing, without saying why. So the answer to INFO is read before
 * the tier is used (`redis_mode`, `cluster_enabled`, `role`: https://redis.io/docs/latest/commands/info/),
 * and the Sentinels are asked for the primary by name (`SENTINEL get-master-addr-by-name`:
 * https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/#sentinel-api).
 * A mismatch is a RedisRefusal whose message names the key to set instead. After a down, the
 * Sentinels are asked again where the primary is (sentinelsPrimary), and the command connection's
 * peer compared with it (reachesOneOf): connection.ts onThePrimary.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisTarget } from './target.js';

/** The configuration and the server disagree; `key` is the configuration key the operator should look at. */
export class RedisRefusal extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message);
    this.name = 'RedisRefusal';
    // main.ts prints a start failure's stack: this is an operator's matter, one line says it all.
    this.stack = message;
  }
}

const CLUSTER_NODES = "list the cluster's nodes in WIKIEDGE_REDIS_CLUSTER_NODES instead (the shared tier keeps a cluster's keys in hash-tagged slots)";

/** The fields of an INFO answer (`key:value` lines; `# Section` headers and blank lines skipped). */
export function parseInfo(info: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of info.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out.set(line.slice(0, i), line.slice(i + 1).trim());
  }
  return out;
}

/**
 * `used_memory` and `maxmemory` of an INFO answer (its `# Memory` section: `INFO memory`, or the
 * default sections read at connect), or undefined when the answer has no such fields. A
 * `maxmemory` of 0 is a Redis without a bound (https://redis.io/docs/latest/commands/info/).
 */
export function memoryOf(info: string): { readonly used: number; readonly max: number } | undefined {
  const f = parseInfo(info);
  const used = Number(f.get('used_memory'));
  const max = Number(f.get('maxmemory'));
  return f.has('used_memory') && f.has('maxmemory') && Number.isFinite(used) && Number.isFinite(max) ? { used, max } : undefined;
}

/** Why the server that answered `info` is not what `target` configures, or undefined when it is. */
export function serverMismatch(target: RedisTarget, info: string): RedisRefusal | undefined {
  const f = parseInfo(info);
  const mode = f.get('redis_mode');
  const cluster = mode === 'cluster' || f.get('cluster_enabled') === '1';
  if (target.kind === 'cluster') {
    if (cluster) return undefined;
    return new RedisRefusal(
      'WIKIEDGE_REDIS_CLUSTER_NODES',
      `WIKIEDGE_REDIS_CLUSTER_NODES reaches a Redis that is not a cluster node (INFO says ${mode === 'sentinel' ? 'redis_mode:sentinel' : 'cluster_enabled:0'}): give one Redis as WIKIEDGE_REDIS_URL, or Sentinels as WIKIEDGE_REDIS_SENTINELS`,
    );
  }
  if (target.kind === 'url') {
    if (mode === 'sentinel')
      return new RedisRefusal(
        'WIKIEDGE_REDIS_SENTINELS',
        'WIKIEDGE_REDIS_URL reaches a Redis Sentinel (INFO says redis_mode:sentinel), which stores no data: list the Sentinels in WIKIEDGE_REDIS_SENTINELS and name the primary in WIKIEDGE_REDIS_SENTINEL_MASTER instead of WIKIEDGE_REDIS_URL',
      );
    if (cluster)
      return new RedisRefusal(
        'WIKIEDGE_REDIS_CLUSTER_NODES',
        `WIKIEDGE_REDIS_URL reaches a Redis Cluster node (INFO says cluster_enabled:1): ${CLUSTER_NODES}`,
      );
    if (f.get('role') === 'slave') {
      const of = f.has('master_host') ? `, of ${f.get('master_host')}:${f.get('master_port')}` : '';
      return new RedisRefusal(
        'WIKIEDGE_REDIS_URL',
        `WIKIEDGE_REDIS_URL reaches a replica (INFO says role:slave${of}), which refuses writes: point it at the primary, or list the Sentinels in WIKIEDGE_REDIS_SENTINELS (with WIKIEDGE_REDIS_SENTINEL_MASTER) to follow failovers`,
      );
    }
    return undefined;
  }
  // With Sentinels ioredis checks the role itself (ROLE) and asks the Sentinels again on a mismatch.
  if (mode === 'sentinel')
    return new RedisRefusal(
      'WIKIEDGE_REDIS_SENTINEL_MASTER',
      `the Sentinels name a Sentinel as the primary "${target.name}" (INFO says redis_mode:sentinel): check their sentinel monitor lines`,
    );
  if (cluster)
    return new RedisRefusal(
      'WIKIEDGE_REDIS_CLUSTER_NODES',
      `the primary "${target.name}" that WIKIEDGE_REDIS_SENTINELS name is a Redis Cluster node (INFO says cluster_enabled:1): ${CLUSTER_NODES}`,
    );
  return undefined;
}

type Answer =
  | { readonly kind: 'primary' }
  | { readonly kind: 'unknown-name'; readonly monitored: readonly string[] }
  | { readonly kind: 'not-a-sentinel'; readonly error: string }
  | { readonly kind: 'auth'; readonly error: string }
  | { readonly kind: 'unreachable' };

export interface SentinelVerdict {
  /** At least one Sentinel answered (whatever it said). */
  readonly answered: boolean;
  readonly refusal?: RedisRefusal;
}

/**
 * Ask every Sentinel for the primary named in `target` (bounded by `timeoutMs` each, all at once).
 * A refusal when one of them is not a Sentinel (it answered SENTINEL with an error), or when
 * those that answered all know no primary of that name; nothing when none answered (they are
 * down: the tier waits for them, as for a Redis that is down).
 */
export async function checkSentinels(target: Extract<RedisTarget, { kind: 'sentinel' }>, timeoutMs: number): Promise<SentinelVerdict> {
  const answers = await Promise.all(target.sentinels.map((s) => askSentinel(target, s, timeoutMs)));
  const addr = (i: number) => {
    const s = target.sentinels[i]!;
    return s.host.includes(':') ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`;
  };
  const answered = answers.some((a) => a.kind !== 'unreachable');
  const wrong = answers.findIndex((a) => a.kind === 'not-a-sentinel');
  if (wrong >= 0) {
    const a = answers[wrong] as Extract<Answer, { kind: 'not-a-sentinel' }>;
    return {
      answered,
      refusal: new RedisRefusal(
        'WIKIEDGE_REDIS_SENTINELS',
        `WIKIEDGE_REDIS_SENTINELS lists ${addr(wrong)}, which is not a Redis Sentinel (it answers SENTINEL get-master-addr-by-name with: ${a.error}); list the Sentinels' ports (26379 by convention), or give a single Redis as WIKIEDGE_REDIS_URL`,
      ),
    };
  }
  if (answers.some((a) => a.kind === 'primary') || !answered) return { answered };
  const auth = answers.findIndex((a) => a.kind === 'auth');
  if (auth >= 0)
    return {
      answered,
      refusal: new RedisRefusal(
        'WIKIEDGE_REDIS_SENTINEL_PASSWORD',
        `the Sentinel ${addr(auth)} refuses WIKIEDGE_REDIS_SENTINEL_PASSWORD (${(answers[auth] as Extract<Answer, { kind: 'auth' }>).error}): set it to the Sentinels' requirepass`,
      ),
    };
  const monitored = [...new Set(answers.flatMap((a) => (a.kind === 'unknown-name' ? a.monitored : [])))];
  return {
    answered,
    refusal: new RedisRefusal(
      'WIKIEDGE_REDIS_SENTINEL_MASTER',
      `WIKIEDGE_REDIS_SENTINEL_MASTER is "${target.name}", but no Sentinel of WIKIEDGE_REDIS_SENTINELS monitors a primary of that name (they monitor: ${monitored.length > 0 ? monitored.join(', ') : 'none'})`,
    ),
  };
}

/** A client of one Sentinel, not connected yet, that never retries nor queues. */
function sentinelClient(
  target: Extract<RedisTarget, { kind: 'sentinel' }>,
  sentinel: { readonly host: string; readonly port: number },
  timeoutMs: number,
): Redis {
  return new Redis({
    host: sentinel.host,
    port: sentinel.port,
    ...(target.sentinelPassword && { password: target.sentinelPassword }),
    ...(target.tls && { tls: {} }),
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    disableClientInfo: true,
  });
}

const boundedBy =
  (timeoutMs: number) =>
  <T>(p: Promise<T>): Promise<T> =>
    Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timeout')), timeoutMs).unref())]);

async function askSentinel(
  target: Extract<RedisTarget, { kind: 'sentinel' }>,
  sentinel: { readonly host: string; readonly port: number },
  timeoutMs: number,
): Promise<Answer> {
  const client = sentinelClient(target, sentinel, timeoutMs);
  // A refused AUTH ends the connection attempt: its error comes as an event, connect() may only say "closed".
  let authError: string | undefined;
  client.on('error', (err: Error) => {
    if (/^(WRONGPASS|NOAUTH)/.test(err.message)) authError = err.message;
  });
  const bounded = boundedBy(timeoutMs);
  try {
    try {
      await bounded(client.connect());
    } catch (err) {
      const message = authError ?? (err as Error).message;
      return /^(WRONGPASS|NOAUTH)/.test(message) ? { kind: 'auth', error: message } : { kind: 'unreachable' };
    }
    let reply: unknown;
    try {
      reply = await bounded(client.call('SENTINEL', 'get-master-addr-by-name', target.name));
    } catch (err) {
      const message = (err as Error).message;
      // A reply error is an answer (ERR unknown command, ...); a lost connection is not.
      if ((err as Error).name !== 'ReplyError') return { kind: 'unreachable' };
      return /^(NOAUTH|WRONGPASS)/.test(message) ? { kind: 'auth', error: message } : { kind: 'not-a-sentinel', error: message };
    }
    if (Array.isArray(reply) && reply.length === 2) return { kind: 'primary' };
    const masters = await bounded(client.call('SENTINEL', 'masters')).catch(() => []);
    return { kind: 'unknown-name', monitored: Array.isArray(masters) ? masters.flatMap(masterName) : [] };
  } finally {
    client.disconnect();
  }
}

/** `SENTINEL MASTERS` gives each primary as a flat list of field, value, field, value, ... */
function masterName(entry: unknown): string[] {
  if (!Array.isArray(entry)) return [];
  const i = entry.indexOf('name');
  return i >= 0 && typeof entry[i + 1] === 'string' ? [entry[i + 1] as string] : [];
}

export interface Address {
  readonly host: string;
  readonly port: number;
}

/**
 * Where the Sentinels say the primary is: the addresses (each once) named by the Sentinels that
 * answered with the highest configuration epoch, or undefined when none answered with an address.
 *
 * The address is `SENTINEL get-master-addr-by-name`, what ioredis connects to
 * (resolveMaster in ioredis' built/connectors/SentinelConnector/index.js). Sentinels may disagree
 * for a while after a failover (the others learn the new configuration from the one that made
 * it); the one with the highest `config-epoch` (`SENTINEL MASTER`) has the latest, as Sentinel
 * itself decides (https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/,
 * "Configuration propagation"): a Sentinel left behind by a partition does not outvote the others.
 */
export async function sentinelsPrimary(target: Extract<RedisTarget, { kind: 'sentinel' }>, timeoutMs: number): Promise<readonly Address[] | undefined> {
  const views = await Promise.all(target.sentinels.map((s) => askPrimary(target, s, timeoutMs)));
  const named = views.filter((v) => v !== undefined);
  if (named.length === 0) return undefined;
  const epoch = Math.max(...named.map((v) => v.epoch));
  const latest = new Map(named.filter((v) => v.epoch === epoch).map((v) => [`${v.address.host}:${v.address.port}`, v.address]));
  return [...latest.values()];
}

async function askPrimary(
  target: Extract<RedisTarget, { kind: 'sentinel' }>,
  sentinel: Address,
  timeoutMs: number,
): Promise<{ readonly address: Address; readonly epoch: number } | undefined> {
  const client = sentinelClient(target, sentinel, timeoutMs);
  client.on('error', () => undefined);
  const bounded = boundedBy(timeoutMs);
  try {
    await bounded(client.connect());
    const reply = await bounded(client.call('SENTINEL', 'get-master-addr-by-name', target.name));
    if (!Array.isArray(reply) || reply.length !== 2) return undefined;
    const address = { host: String(reply[0]), port: Number(reply[1]) };
    // A Sentinel too old to say its epoch (or that failed to) counts as the lowest.
    const master = await bounded(client.call('SENTINEL', 'MASTER', target.name)).catch(() => undefined);
    const i = Array.isArray(master) ? master.indexOf('config-epoch') : -1;
    const epoch = i >= 0 ? Number((master as unknown[])[i + 1]) : -1;
    return { address, epoch: Number.isFinite(epoch) ? epoch : -1 };
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** An IP as a socket reports it: an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is the IPv4 one. */
/**
 * An IP literal in one spelling: IPv4-mapped IPv6 as its IPv4 (`::ffff:127.0.0.1`,
 * `::ffff:7f00:1`), IPv6 in its canonical form (RFC 5952, as the WHATWG URL parser writes it):
 * a Sentinel may announce `2001:db8:0:0::1` where the socket says `2001:db8::1`.
 */
export function plainIp(ip: string): string {
  const lower = ip.toLowerCase();
  if (isIP(lower) !== 6) return lower;
  let canonical: string;
  try {
    canonical = new URL(`http://[${lower}]/`).hostname.slice(1, -1);
  } catch {
    // A zone id (`fe80::1%eth0`): no URL takes it; compared as written.
    return lower;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * Whether a connection to `remote` (its socket's remoteAddress and remotePort, an IP) reaches one
 * of `named` (as the Sentinels name it: an IP, or a hostname with Sentinel's
 * `resolve-hostnames`/`announce-hostnames`); undefined when a hostname could not be resolved.
 */
export async function reachesOneOf(
  named: readonly Address[],
  remote: Address,
  lookup: (host: string) => Promise<readonly string[]> = async (host) => (await dnsLookup(host, { all: true })).map((a) => a.address),
): Promise<boolean | undefined> {
  let unknown = false;
  const at = plainIp(remote.host);
  for (const a of named) {
    if (a.port !== remote.port) continue;
    if (isIP(a.host) !== 0) {
      if (plainIp(a.host) === at) return true;
      continue;
    }
    try {
      if ((await lookup(a.host)).some((ip) => plainIp(ip) === at)) return true;
    } catch {
      unknown = true;
    }
  }
  return unknown ? undefined : false;
}
