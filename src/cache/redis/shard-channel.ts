/**
 * The purge channel on a Redis Cluster: sharded pub/sub (SSUBSCRIBE / SPUBLISH, Redis 7), whose
 * messages stay within the shard that owns the channel's slot instead of crossing the whole
 * cluster bus as PUBLISH does (https://redis.io/docs/latest/develop/interact/pubsub/#sharded-pubsub).
 *
 * One plain connection to the master that owns the slot, as the cluster client last saw the
 * topology, made anew after every loss (a failover moves the slot to the promoted replica). It
 * looks like the subscriber connection of one Redis to connection.ts: the events `ready`,
 * `close`, `error`, `message`, and `subscribe` / `quit` / `disconnect` / `connect`, so that the
 * rule for a lost channel stays the same (purges sent meanwhile may be missed: a gap).
 */
import { EventEmitter } from 'node:events';
import type { Cluster, RedisOptions } from 'ioredis';
import { Redis } from 'ioredis';

/** How long after a loss (or before the topology is known) the owner is looked up again. */
const AGAIN_MS = 250;

/** CRC16/XMODEM, as Redis Cluster maps keys to slots (cluster-spec, "Key distribution model"). */
function crc16(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of a key or a sharded channel: of its hash tag when it has a non-empty one. */
export function slotOf(key: string): number {
  const open = key.indexOf('{');
  if (open >= 0) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) key = key.slice(open + 1, close);
  }
  return crc16(Buffer.from(key, 'utf8')) % 16384;
}

export class ShardChannel extends EventEmitter {
  status: 'wait' | 'connecting' | 'ready' | 'close' | 'end' = 'wait';
  private client: Redis | undefined;
  private channel: string | undefined;
  private ended = false;
  private again: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: RedisOptions,
  ) {
    super();
    cluster.on('ready', () => {
      if (!this.client && !this.ended) this.open();
    });
    // The slot's master replaced without this connection hearing of it: a master stopped or cut
    // off from its cluster but not from this gateway (SIGSTOP, a paused VM) keeps the socket
    // open (the kernel answers keepalives) and sends no SUNSUBSCRIBE, while the others publish
    // on the replica promoted in its place. The cluster client reads the slot map every
    // slotsRefreshInterval (cluster-client.ts): a channel on another node than the owner it
    // names is ended, and subscribes again there (its close is a gap: connection.ts).
    cluster.on('refresh', () => this.followOwner());
  }

  /** Ends the connection when it is not on the master the slot map names for the channel now. */
  private followOwner(): void {
    const client = this.client;
    const at = this.owner();
    if (!client || !at || this.ended) return;
    if (client.options.host === at.host && client.options.port === at.port) return;
    client.disconnect();
  }

  /**
   * Subscribe (now, or as soon as connected); messages come as `message` (channel, text). Settles
   * once subscribed, as a plain client's SUBSCRIBE does: settled before, connection.ts took the
   * channel for subscribed from the start, so ready() did not wait for it and a first
   * subscription made after the process had served without it was not a channel resumed (test:
   * redis-stale-before-learned-when-the-tier-comes-up.test.ts).
   */
  subscribe(channel: string): Promise<unknown> {
    this.channel = channel;
    if (!this.client) {
      const subscribed = new Promise<void>((resolve) => this.once('ready', () => resolve()));
      this.open();
      return subscribed;
    }
    return this.client.ssubscribe(channel);
  }

  /** The master that owns the channel's slot, as the cluster client knows it now. */
  private owner(): { host: string; port: number } | undefined {
    if (this.channel === undefined) return undefined;
    const key = this.cluster.slots[slotOf(this.channel)]?.[0];
    if (!key) return undefined;
    const i = key.lastIndexOf(':');
    return { host: key.slice(0, i), port: Number(key.slice(i + 1)) };
  }

  private open(): void {
    if (this.ended) return;
    const at = this.owner();
    if (!at) return this.later();
    this.status = 'connecting';
    const client = new Redis({
      ...this.options,
      host: at.host,
      port: at.port,
      // One connection per owner: a loss ends it, and the owner is looked up again.
      retryStrategy: () => null,
      autoResubscribe: false,
      enableOfflineQueue: true,
      maxRetriesPerRequest: null,
    });
    this.client = client;
    client.on('error', (err: Error) => this.emit('error', err));
    client.on('smessage', (channel: string, message: string) => this.emit('message', channel, message));
    client.on('ready', () => {
      if (this.client !== client || this.channel === undefined) return;
      client.ssubscribe(this.channel).then(
        () => {
          if (this.client !== client) return;
          this.status = 'ready';
          this.emit('ready');
        },
        (err: unknown) => {
          this.emit('error', err instanceof Error ? err : new Error(String(err)));
          // Refused (CLUSTERDOWN while the cluster recovers, MOVED from a stale slot map, an
          // ACL): the connection ends, so that 'end' looks the owner up again and retries. Left
          // open, it stayed 'connecting' for good and purges from other replicas never arrived
          // (test/in-process/redis-cluster-channel-refused-subscription-is-retried.test.ts).
          if (this.client === client) client.disconnect();
        },
      );
    });
    // The slot moved away (a resharding, or this node demoted): Redis ends the subscription
    // with an unsolicited SUNSUBSCRIBE, which ioredis reports as 'moved' (its DataHandler).
    client.on('moved', () => client.disconnect());
    client.on('end', () => {
      if (this.client !== client) return;
      this.client = undefined;
      const was = this.status;
      this.status = 'close';
      if (was === 'ready') this.emit('close');
      // Ask the cluster where the slot is now before connecting again.
      this.cluster.refreshSlotsCache();
      this.later();
    });
  }

  private later(): void {
    if (this.ended) return;
    this.again ??= setTimeout(() => {
      this.again = undefined;
      if (!this.client) this.open();
    }, AGAIN_MS);
    this.again.unref();
  }

  /** connection.ts calls it for a client that ended by itself: this one never stays ended. */
  connect(): Promise<void> {
    if (!this.client) this.open();
    return Promise.resolve();
  }

  quit(): Promise<unknown> {
    return this.client ? this.client.quit() : Promise.resolve();
  }

  disconnect(): void {
    this.ended = true;
    this.status = 'end';
    if (this.again) clearTimeout(this.again);
    const c = this.client;
    this.client = undefined;
    c?.disconnect();
  }
}
