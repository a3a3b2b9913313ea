/**
 * The Redis tier's connections and their health, shared by entries, locks and purges: the command
 * connection, the subscriber connection, the up/down state machine, the PING probe that brings
 * the tier back, and `call`, the only way the other modules talk to Redis.
 *
 * Faults: every call is bounded by `timeoutMs` (or the bound the caller passes). A call that
 * fails marks the tier down at once; calls that time out mark it down when TIMEOUTS_BEFORE_DOWN
 * time out in a row (one late reply on a busy host is not an outage). Down is logged once, and
 * every later call returns at once without Redis, until the connection is ready again and a PING
 * answers (logged once). ioredis reconnects by
 * itself; commands are never queued while disconnected (enableOfflineQueue: false). The
 * subscriber connection queues its SUBSCRIBE and replays it on every reconnect; its state is
 * logged apart, and `ready()` waits for both.
 *
 * The target is one URL, the Sentinels of a primary with replicas, or the seed nodes of a Redis
 * Cluster (./target.ts); with Sentinels both connections reach the primary they name, and after a
 * failover the lost connections come back on the new one by themselves, as after any reconnect.
 * On a cluster the command client is ioredis' Cluster and the subscriber a sharded channel
 * (./cluster-client.ts); a command that fails (its slot's master died) takes the tier down until
 * the probe's PING answers again, as with one Redis.
 *
 * With Sentinels, a tier that was down is taken up again only on the primary the Sentinels name
 * (onThePrimary): a primary that stalled (SIGSTOP, a paused VM) past `down-after-milliseconds`
 * was replaced meanwhile, yet answers PING on the same connection once it runs again, until the
 * Sentinels demote it; what was written there is discarded then. Such a connection is dropped,
 * and ioredis' reconnect asks the Sentinels (test: redis-sentinel-stalled-primary-is-not-taken-back.test.ts).
 *
 * What is reached must be what the configuration says: every new command connection is checked
 * with INFO before the tier is used (./server-check.ts): a cluster node, a Sentinel reached by
 * URL, a replica reached by URL, or Sentinels that know no primary of the configured name are
 * refused. A refusal met at start makes `ready()` throw (the gateway does not start, and the
 * message names the key to set instead); one met later keeps the tier down, logged once.
 */
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import { clusterClients } from './cluster-client.js';
import { ClusterWatch, type DataLoss, restarted, runIdOf } from './cluster-watch.js';
import { DataLossGaps } from './data-loss-gaps.js';
import type { Logger } from 'pino';
import type { RedisMetrics, RedisOp } from '../../observe/metrics.js';
import { checkSentinels, reachesOneOf, RedisRefusal, sentinelsPrimary, serverMismatch } from './server-check.js';
import { RedisMemory } from './memory.js';
import { describeTarget, type RedisTarget, targetOptions } from './target.js';

/** What a bounded call ended with: Redis' answer, or nothing (failed, timed out, or the tier is down). */
export type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false };
const FAILED: Outcome<never> = { ok: false };

export interface RedisConnectionOptions {
  readonly url: string;
  /** Where Redis is, when not simply `url` (Sentinels; credentials apart from the URL): ./target.ts. */
  readonly target?: RedisTarget | undefined;
  /** The bound on every call, unless the caller passes its own. */
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly metrics: RedisMetrics;
  /** Test hook: replace the client factory. */
  readonly connect?: (url: string, options: RedisOptions) => Redis;
  /**
   * The purge channel is subscribed again after it was lost: the purges other replicas sent
   * meanwhile never reached this one (pub/sub keeps nothing for an absent subscriber).
   */
  readonly onChannelResumed?: () => void;
  /**
   * A Redis Cluster master may have lost acknowledged writes (./cluster-watch.ts): record a gap;
   * false when it could not be recorded yet (tried again, `fresh` false).
   */
  readonly onDataLost?: (fresh: boolean) => Promise<boolean>;
}

type State = 'starting' | 'up' | 'down';

/**
 * Timeouts in a row that take the tier down. Each still counts in wikiedge_redis_errors_total
 * and its request goes on without Redis; a call answered in time starts the count again. A
 * stalled Redis reaches it within one burst of concurrent requests, a single late reply (a GC
 * pause, a loaded host) does not take the tier down for every request until the probe.
 */
export const TIMEOUTS_BEFORE_DOWN = 3;

/** How long after a client ended by itself it is connected again (ioredis' own retries are at most 1 s apart). */
const RECONNECT_AFTER_END_MS = 1_000;

/** How often Sentinels are asked for the primary by name while the tier is not connected. */
const SENTINEL_CHECK_MS = 5_000;

export const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/** How long a URL that reached a replica is kept before it is connected again (refuse). */
const REFUSED_RECONNECT_MS = 5_000;

export class RedisConnection {
  /** The command connection; callers go through `call`, and define their scripts on it. */
  readonly cmd: Redis;
  /** The same client as `cmd` when the target is a Redis Cluster (its nodes, its slots). */
  readonly cluster: Cluster | undefined;
  /** Per-shard health and failovers of a cluster, for the metrics, and gaps when a master lost data. */
  private readonly watch: ClusterWatch | undefined;
  /** Every master's used_memory against its maxmemory: whether an entry store may go (./memory.ts). */
  readonly memory: RedisMemory;
  private readonly sub: Redis;
  private state: State = 'starting';
  private subscribed = false;
  private subState: State = 'starting';
  /**
   * ready() gave up before the channel was subscribed: the process serves (and fills its local
   * tier from the wiki) without hearing the other replicas' purges, so the first subscription
   * is a channel resumed too (subscriberUp).
   */
  private servedWithoutChannel = false;
  /** The purge channel, once subscribed to. */
  private channel: string | undefined;
  private probing: NodeJS.Timeout | undefined;
  private closed = false;
  private lastError = '';
  private timeoutsInARow = 0;
  private readonly upWaiters: (() => void)[] = [];
  /** Called each time the tier comes up (onUp). */
  private readonly upListeners: (() => void)[] = [];
  private readonly target: RedisTarget;
  /** The command connection's server passed the INFO check (./server-check.ts) since it connected. */
  private checked = false;
  /** Why the server reached is not the one configured (a refusal), while it is so. */
  private refusal: RedisRefusal | undefined;
  /** The address of the primary last used, to count a Sentinel failover when it changes. */
  private primary: string | undefined;
  /** The run_id of the one primary (URL, Sentinels) at the last check: another one, a restart. */
  private runId: string | undefined;
  /** The INFO read at the last (re)connect, noted (notePrimary) once the tier is up on it. */
  private unnoted: string | undefined;
  /** A URL that reached a replica: the reconnect that resolves its name again (refuse). */
  private reresolving: NodeJS.Timeout | undefined;
  /**
   * The URL reached a replica since the tier was last up: a primary demoted, then promoted again
   * in place (same run_id, same address), resynchronised from the other primary meanwhile and
   * lost what it had acknowledged and not replicated (notePrimary).
   */
  private demoted = false;
  /** Gaps owed for writes Redis may have lost (a restart, a failover), recorded until they are. */
  private readonly gaps: DataLossGaps;
  private sentinelChecks: NodeJS.Timeout | undefined;
  /** The Sentinels could not say where the primary is when the tier came back: logged once until they can. */
  private sentinelsUnheard = false;
  /** A check of the primary while up is under way (stillOnThePrimary). */
  private checkingPrimary = false;
  /** Stale verdicts in a row (onThePrimary), and the addresses the Sentinels named last. */
  private staleVerdicts = 0;
  private named: Awaited<ReturnType<typeof sentinelsPrimary>>;
  /** The last stale primary left (`address -> primary`), logged once until the tier is up. */
  private leftStale: string | undefined;

  constructor(private readonly opts: RedisConnectionOptions) {
    this.target = opts.target ?? { kind: 'url', url: opts.url, username: '', password: '' };
    const base: RedisOptions = {
      // RESP2: the widest server compatibility; the subscriber has its own connection anyway.
      protocol: 2,
      connectTimeout: Math.max(1_000, opts.timeoutMs * 20),
      // Reconnect forever, at most a second apart.
      retryStrategy: (times) => Math.min(50 * times, 1_000),
      disableClientInfo: true,
      enableAutoPipelining: false,
    };
    const target = this.target;
    const where = target.kind === 'url' ? target.url : describeTarget(target);
    const connect = opts.connect ?? ((url, o) => (target.kind === 'url' ? new Redis(url, o) : new Redis(o)));
    const clustered = target.kind === 'cluster' ? clusterClients(target, base) : undefined;
    this.cluster = clustered?.cluster;
    this.gaps = new DataLossGaps(opts.onDataLost);
    this.watch = this.cluster && new ClusterWatch(this.cluster, opts.metrics, opts.log, opts.timeoutMs, this.gaps);
    this.cmd =
      clustered?.cmd ??
      connect(where, {
        ...targetOptions(target, base),
        connectionName: 'wikiedge',
        // Never queue while disconnected, never replay after a reconnect: fail at once instead.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
      });
    this.cmd.on('error', (err: Error) => {
      this.lastError = err.message;
      if (this.state === 'starting') this.markDown('connect', err);
    });
    const cluster = this.cluster;
    this.memory = new RedisMemory(
      () => {
        if (this.state !== 'up' || this.closed) return [];
        if (!cluster) return [{ name: 'redis', info: () => this.cmd.info('memory') }];
        return cluster.nodes('master').map((n) => ({ name: `${n.options.host}:${n.options.port}`, info: () => n.info('memory') }));
      },
      Math.max(1_000, opts.timeoutMs * 20),
      opts.metrics,
      opts.log,
    );
    this.cmd.on('ready', () => void this.probe());
    this.cmd.on('close', () => {
      this.checked = false;
      if (!this.closed) this.markDown('connection', new Error(this.lastError || 'connection closed'));
    });

    this.sub =
      clustered?.sub ??
      connect(where, {
        ...targetOptions(target, base),
        connectionName: 'wikiedge-sub',
        // The first SUBSCRIBE is queued until connected. After a reconnect subscriberUp sends it
        // again itself: ioredis' own re-subscription (readyHandler in its
        // built/redis/event_handler.js) leaves the promise of its SUBSCRIBE without a rejection
        // handler, so a close() before the reply was an unhandled "Connection is closed." (test:
        // redis-subscriber-closed-while-subscribing-again.test.ts).
        enableOfflineQueue: true,
        autoResubscribe: false,
        maxRetriesPerRequest: null,
      });
    this.sub.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    this.sub.on('ready', () => this.subscriberUp());
    this.sub.on('close', () => this.subscriberDown());
    // ioredis gives a client up for good ('end') when its connector fails outright rather than its
    // connection (Redis.connect in ioredis' lib/Redis.ts): only close() may end ours.
    for (const client of [this.cmd, this.sub]) client.on('end', () => this.connectAgain(client));

    if (target.kind === 'sentinel') {
      // Sentinels that know no primary of that name make ioredis retry for ever, saying only
      // "All sentinels are unreachable": ask them ourselves, at start and while not connected.
      const ask = () => {
        if (this.closed || (this.cmd.status === 'ready' && !this.refusal)) return;
        void checkSentinels(target, Math.max(1_000, opts.timeoutMs * 20)).then((verdict) => {
          if (this.closed) return;
          if (verdict.refusal) this.refuse(verdict.refusal);
          else if (verdict.answered && this.refusal?.key === 'WIKIEDGE_REDIS_SENTINEL_MASTER') this.refusal = undefined;
        });
      };
      ask();
      this.sentinelChecks = setInterval(() => {
        ask();
        void this.stillOnThePrimary(target);
      }, SENTINEL_CHECK_MS);
      this.sentinelChecks.unref();
    }
  }

  /**
   * A cluster store could not undo itself: an entry may be in Redis that no index set names
   * (./cluster-writes.ts). A gap, as for a master that lost its sets (./cluster-watch.ts).
   */
  entryUnindexed(): void {
    this.watch?.lost('store');
  }

  private connectAgain(client: Redis): void {
    if (this.closed) return;
    setTimeout(() => {
      if (!this.closed && client.status === 'end') client.connect().catch(() => undefined);
    }, RECONNECT_AFTER_END_MS).unref();
  }

  /** True while Redis is used on the request path. */
  get up(): boolean {
    return this.state === 'up';
  }

  /** Resolves when the tier is up (or after `maxMs`, whichever is first): used once at start. */
  async ready(maxMs: number): Promise<boolean> {
    if (this.state === 'up' && this.subscribed) return true;
    if (!this.refusal) await Promise.race([new Promise<void>((resolve) => this.upWaiters.push(resolve)), sleep(maxMs)]);
    if (this.refusal) {
      // The gateway does not start: nothing will use these connections.
      const refusal = this.refusal;
      await this.close();
      throw refusal;
    }
    if (!this.subscribed) this.servedWithoutChannel = true;
    return this.state === 'up';
  }

  /** `listener` is called each time the tier comes up (at start, and after each time it was down). */
  onUp(listener: () => void): void {
    this.upListeners.push(listener);
  }

  /** Subscribe the subscriber connection to `channel`; its messages go to `onMessage`. */
  subscribe(channel: string, onMessage: (text: string) => void): void {
    this.channel = channel;
    this.sub.on('message', (ch: string, message: string) => {
      if (ch === channel) onMessage(message);
    });
    this.sub.subscribe(channel).then(
      () => this.subscriberUp(),
      (err: unknown) => {
        if (!this.closed) this.opts.metrics.error('subscribe');
        this.lastError = String(err);
      },
    );
  }

  // ------------------------------------------------------------------------------ state
  private markUp(): void {
    if (this.closed || this.state === 'up' || this.refusal) return;
    const was = this.state;
    this.state = 'up';
    this.timeoutsInARow = 0;
    this.leftStale = undefined;
    this.opts.metrics.up.set(1);
    if (this.probing) clearInterval(this.probing);
    this.probing = undefined;
    this.opts.log.info({ redis: 'up', was }, 'redis tier up: shared entries, locks and purges in use');
    for (const listener of this.upListeners) listener();
    this.notifyWaiters();
    // The masters' run_ids now rather than at the next turn of the watch: known from the start,
    // and a master that restarted while the tier was down is seen as soon as it is back.
    this.watch?.look();
    void this.memory.poll();
  }

  private markDown(op: RedisOp | 'connection' | 'connect', err: unknown): void {
    if (this.closed || this.state === 'down') return;
    if (this.state === 'up') this.opts.metrics.downs.inc();
    this.state = 'down';
    this.opts.metrics.up.set(0);
    this.opts.log.warn(
      { redis: 'down', op, err: err instanceof Error ? err.message : String(err) },
      'redis tier down: serving from the local tier and the wiki until it is back',
    );
    this.startProbing();
  }

  private startProbing(): void {
    // A slow Redis leaves the connection "ready": no event will say it is back, so probe.
    this.probing ??= setInterval(() => void this.probe(), Math.max(250, this.opts.timeoutMs * 5));
    this.probing.unref();
  }

  /** What was reached is not what the configuration says: the tier stays down, logged once per reason. */
  private refuse(refusal: RedisRefusal): void {
    if (this.closed) return;
    const known = this.refusal?.message === refusal.message;
    this.refusal = refusal;
    if (!known) this.opts.log.error({ redis: 'refused', key: refusal.key, err: refusal.message }, `redis tier refused: ${refusal.message}`);
    this.markDown('connect', refusal);
    this.startProbing();
    // A URL that reaches a replica: a managed endpoint (a DNS name, a Service) may not have moved
    // to the new primary yet when a READONLY reconnect resolved it, and the probe reads INFO
    // again on the same socket, which a replica never closes: reconnect now and then, so that
    // the name is resolved again, or the tier stayed down until the process restarted.
    if (this.target.kind === 'url' && refusal.key === 'WIKIEDGE_REDIS_URL') {
      this.demoted = this.runId !== undefined;
      this.reresolving ??= setTimeout(() => {
        this.reresolving = undefined;
        if (!this.closed && this.refusal?.key === 'WIKIEDGE_REDIS_URL') this.cmd.disconnect(true);
      }, REFUSED_RECONNECT_MS).unref();
    }
    // ready() at start gives up at once instead of waiting for a tier that will not come.
    for (const w of this.upWaiters.splice(0)) w();
  }

  private async probe(): Promise<void> {
    if (this.closed || this.cmd.status !== 'ready') return;
    const bound = { timeoutMs: Math.max(1_000, this.opts.timeoutMs * 20), evenIfDown: true };
    if (!this.checked || this.refusal) {
      const info = await this.call('ping', () => this.cmd.info(), bound);
      if (!info.ok) return this.startProbing();
      const mismatch = serverMismatch(this.target, info.value);
      if (mismatch) return this.refuse(mismatch);
      if (this.refusal?.key !== 'WIKIEDGE_REDIS_SENTINEL_MASTER') this.refusal = undefined;
      this.checked = true;
      this.unnoted = info.value;
      // The INFO just read is the reading at connect of the one Redis (on a cluster it came from
      // any node: each master is read by the memory poll once the tier is up).
      if (!this.cluster) this.memory.note('redis', info.value);
    }
    const r = await this.call('ping', () => this.cmd.ping(), { timeoutMs: this.opts.timeoutMs, evenIfDown: true });
    if (!r.ok) return;
    if (this.state === 'down' && this.target.kind === 'sentinel' && !(await this.onThePrimary(this.target, bound.timeoutMs))) return;
    this.markUp();
    // Once up on it (and, with Sentinels, once it is the primary they name, not a stale one left
    // at once): a gap owed now is written to Redis at its first try.
    if (this.unnoted !== undefined) {
      const info = this.unnoted;
      this.unnoted = undefined;
      this.notePrimary(info);
    }
  }

  /**
   * With Sentinels, after a down: whether the command connection reaches the primary the
   * Sentinels name now. A primary that stalled without closing its connections and was replaced
   * meanwhile answers PING (and ROLE says master: it has not been told otherwise) until the
   * Sentinels reconfigure it as a replica of the new one, which drops what was written to it
   * since (https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/, "Consistency
   * under partitions"). Only the Sentinels' view says it is stale; then both connections that
   * reach it are dropped, ioredis reconnects through the Sentinels (targetOptions in ./target.ts),
   * and the tier stays down until the new connection's probe. Sentinels that do not answer (or a
   * name that does not resolve) cannot say: the tier comes up as it did before this check, logged
   * once.
   */
  private async onThePrimary(
    target: Extract<RedisTarget, { kind: 'sentinel' }>,
    timeoutMs: number,
    /** Stale verdicts in a row before it is left (the check while up asks twice: stillOnThePrimary). */
    verdicts = 1,
  ): Promise<boolean> {
    const stream = this.cmd.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    if (!stream?.remoteAddress || stream.remotePort === undefined) return true;
    const at = { host: stream.remoteAddress, port: stream.remotePort };
    const named = await sentinelsPrimary(target, timeoutMs);
    const reaches = named && (await reachesOneOf(named, at));
    this.named = named;
    // The connection changed meanwhile (closed, reconnected): the new one's own probe decides.
    if (this.closed || this.cmd.stream !== stream || this.cmd.status !== 'ready') return false;
    if (reaches === false && ++this.staleVerdicts < verdicts) return true;
    if (reaches !== false) this.staleVerdicts = 0;
    if (reaches === undefined) {
      if (!this.sentinelsUnheard) {
        this.sentinelsUnheard = true;
        this.opts.log.warn(
          { redis: 'primary-unconfirmed', at: `${at.host}:${at.port}` },
          'the Sentinels could not say which address is the primary: the tier comes back on the connection that answered',
        );
      }
      return true;
    }
    this.sentinelsUnheard = false;
    if (reaches) return true;
    this.staleVerdicts = 0;
    const primary = named!.map((a) => `${a.host}:${a.port}`).join(',');
    const stale = `${at.host}:${at.port} -> ${primary}`;
    if (this.leftStale !== stale) {
      this.leftStale = stale;
      this.opts.log.warn(
        { redis: 'stale-primary', at: `${at.host}:${at.port}`, primary },
        'redis answers again on a primary the Sentinels have replaced: reconnecting to the one they name, the tier stays down until then',
      );
    }
    // disconnect(true): the connection closes and ioredis' retryStrategy reconnects (Redis.disconnect
    // in ioredis' built/Redis.js), through the Sentinels. The subscriber on the same stale server
    // hears nothing published on the new primary: it subscribes again there (onChannelResumed).
    this.cmd.disconnect(true);
    const sub = this.sub.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    if (sub?.remoteAddress === at.host && sub.remotePort === at.port) this.sub.disconnect(true);
    return false;
  }

  /**
   * With Sentinels, while the tier is up: whether the connection still reaches the primary they
   * name, every SENTINEL_CHECK_MS. A partition that cuts the Sentinels off from the primary but not
   * from this gateway (or a failover whose demotion of the old primary failed) leaves the tier up
   * on a primary that was replaced, whose writes the demotion will discard: the purges written
   * there would be lost, the new primary keeping what they removed. Left as after a down
   * (onThePrimary): the connections close, the tier goes down, and comes up on the one the Sentinels name
   * (test/in-process/redis-sentinel-old-primary-still-answering-is-left.test.ts).
   */
  private async stillOnThePrimary(target: Extract<RedisTarget, { kind: 'sentinel' }>): Promise<void> {
    if (this.checkingPrimary || this.closed || this.state !== 'up' || this.cmd.status !== 'ready') return;
    this.checkingPrimary = true;
    try {
      // Stale twice in a row (Sentinels still agreeing on a failover can disagree once): both
      // connections are dropped there, and their close takes the tier down.
      if (!(await this.onThePrimary(target, Math.max(1_000, this.opts.timeoutMs * 20), 2))) return;
      // The subscriber is a connection of its own: one left on a replaced primary hears none of
      // the purges published on the new one.
      const sub = this.sub.stream as { remoteAddress?: string; remotePort?: number } | undefined;
      const named = this.named;
      if (!named || !sub?.remoteAddress || sub.remotePort === undefined) return;
      const at = { host: sub.remoteAddress, port: sub.remotePort };
      if ((await reachesOneOf(named, at)) !== false || this.closed || this.sub.stream !== sub) return;
      this.opts.log.warn(
        { redis: 'stale-primary', connection: 'subscriber', at: `${at.host}:${at.port}`, primary: named.map((a) => `${a.host}:${a.port}`).join(',') },
        'the redis purge channel is on a primary the Sentinels have replaced: subscribing again on the one they name',
      );
      this.sub.disconnect(true);
    } finally {
      this.checkingPrimary = false;
    }
  }

  /**
   * The one primary (a URL's, the Sentinels'), checked after each (re)connect: another address
   * (a Sentinel failover) or another run_id (Redis draws one at every start: a restart, or a
   * managed endpoint now on another node) may have lost writes it acknowledged, purges among
   * them (replication is asynchronous; a restart reloads the last snapshot, or nothing): the
   * entries those purges removed, the guards they set, are back, and every replica would serve
   * them. A gap, as for a cluster's master (cluster-watch.ts); the cost is a refresh of what is
   * cached at its next use, once per failover or restart.
   */
  private notePrimary(info: string): void {
    if (this.cluster) return;
    const runId = runIdOf(info);
    const stream = this.cmd.stream as { remoteAddress?: string; remotePort?: number } | undefined;
    const at = stream?.remoteAddress ? `${stream.remoteAddress}:${stream.remotePort}` : undefined;
    const moved = this.target.kind === 'sentinel' && at !== undefined && this.primary !== undefined && this.primary !== at;
    if (moved) this.opts.metrics.failovers.inc();
    // Another server is another run_id; the same one reached at another address lost nothing.
    if (restarted(this.runId, runId)) {
      if (moved)
        this.dataLost('failover', { was: this.primary!, now: at! }, 'redis primary changed (Sentinel failover): the tier goes on with the new primary');
      else this.dataLost('restart', { at: at ?? '' }, 'redis restarted, or its address reaches another server now (another run_id)');
    } else if (this.demoted) {
      this.dataLost('failover', { at: at ?? '' }, 'redis was a replica since the tier was last up (demoted, then promoted again)');
    } else if (moved) {
      this.opts.log.warn({ redis: 'failover', was: this.primary, now: at }, 'redis primary changed (Sentinel failover): the tier goes on with the new primary');
    }
    this.demoted = false;
    if (at !== undefined) this.primary = at;
    if (runId !== undefined) this.runId = runId;
  }

  private dataLost(cause: DataLoss, detail: Record<string, string>, message: string): void {
    this.opts.metrics.shardDataLost.inc({ cause });
    this.opts.log.warn({ redis: cause, ...detail }, `${message}: writes it acknowledged may be lost, so nothing cached before now is vouched for`);
    this.gaps.owe();
  }

  private subscriberUp(): void {
    if (this.closed) return;
    this.subscribed = true;
    // Lost after it was subscribed, or never subscribed while the process already served: a
    // first connection that failed on a Redis Cluster (shard-channel.ts emits 'close' only after
    // 'ready'), or a Redis still loading its dataset (ioredis holds 'ready' back, no 'close'):
    // test/in-process/redis-stale-before-learned-when-the-tier-comes-up.test.ts.
    const resumed = this.subState === 'down' || (this.subState === 'starting' && this.servedWithoutChannel);
    this.subState = 'up';
    if (resumed) {
      // The channel is subscribed again here (ioredis' autoResubscribe is off, see the
      // constructor): what the local tier holds is marked unvouched once the channel surely
      // hears again (a purge published between 'ready' and the SUBSCRIBE would be missed too).
      const resubscribed = this.channel === undefined ? Promise.resolve() : this.sub.subscribe(this.channel);
      resubscribed.then(
        () => {
          if (this.closed) return;
          this.opts.log.info({ redisSubscriber: 'up' }, 'redis purge channel subscribed again');
          this.opts.metrics.channelResumed.inc();
          this.opts.onChannelResumed?.();
        },
        (err: unknown) => {
          if (!this.closed) this.opts.metrics.error('subscribe');
          this.lastError = String(err);
        },
      );
    }
    this.notifyWaiters();
  }

  private subscriberDown(): void {
    if (this.closed) return;
    this.subscribed = false;
    if (this.subState === 'up') {
      this.opts.log.warn({ redisSubscriber: 'down' }, 'redis purge channel lost: purges by other replicas do not reach this one until it is back');
    }
    this.subState = 'down';
  }

  private notifyWaiters(): void {
    if (this.state !== 'up' || !this.subscribed) return;
    for (const w of this.upWaiters.splice(0)) w();
  }

  // ------------------------------------------------------------------------------- calls
  /**
   * Run one Redis call, bounded. Never throws: a failure or timeout counts in
   * wikiedge_redis_errors_total{op} and returns a failed outcome; a failure marks the tier down,
   * a timeout only as the TIMEOUTS_BEFORE_DOWN-th in a row. While the
   * tier is down (or closed) it returns at once without calling, unless `evenIfDown` (the probe).
   *
   * A timeout is Redis not answering, not this process being busy: when the bound passes, the
   * verdict waits one turn of the event loop (setImmediate), because Node runs expired timers
   * before it reads the sockets. After the loop was blocked past the bound (a burst of requests
   * on a loaded host), a reply already sitting in the socket would otherwise lose to its own
   * timer and take the tier down for every request. Measured on a loaded 2-core host (2 busy
   * loops, 100 concurrent misses on 2 replicas in one process): with this grace, 53 of 54 calls
   * whose 50 ms timer fired had their reply read in that same turn; 17 of 45 bursts took the
   * tier down without it, 1 of 45 with it. (An idle process' GETs on that host: max 17 ms.)
   */
  call<T>(op: RedisOp, fn: () => Promise<T>, { timeoutMs = this.opts.timeoutMs, evenIfDown = false } = {}): Promise<Outcome<T>> {
    if (this.closed || (!evenIfDown && this.state !== 'up')) return Promise.resolve(FAILED);
    return new Promise((resolve) => {
      let settled = false;
      const fail = (err: unknown, timedOut = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.opts.metrics.error(op);
        this.timeoutsInARow = timedOut ? this.timeoutsInARow + 1 : 0;
        if (!timedOut || this.timeoutsInARow >= TIMEOUTS_BEFORE_DOWN) this.markDown(op, err);
        resolve(FAILED);
      };
      const timer = setTimeout(() => {
        // The poll phase (reading sockets) comes before setImmediate's check phase.
        setImmediate(() => fail(new Error(`redis ${op} timed out after ${timeoutMs} ms`), true));
      }, timeoutMs);
      let p: Promise<T>;
      try {
        p = fn();
      } catch (err) {
        fail(err);
        return;
      }
      p.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.timeoutsInARow = 0;
          resolve({ ok: true, value });
        },
        (err: unknown) => fail(err),
      );
    });
  }

  // ------------------------------------------------------------------------------- close
  /** Close both connections (QUIT, bounded; then drop them). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probing) clearInterval(this.probing);
    if (this.sentinelChecks) clearInterval(this.sentinelChecks);
    if (this.reresolving) clearTimeout(this.reresolving);
    this.watch?.close();
    this.gaps.close();
    this.memory.close();
    this.opts.metrics.up.set(0);
    const quit = (c: Redis) => (c.status === 'ready' ? c.quit().catch(() => undefined) : Promise.resolve());
    await Promise.race([Promise.all([quit(this.cmd), quit(this.sub)]), sleep(500)]);
    this.cmd.disconnect();
    this.sub.disconnect();
  }
}
