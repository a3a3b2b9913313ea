/**
 * build(config) returns the gateway's Fastify instances (public, and admin unless asked not to)
 * without listening, so tests can use them on port 0 (Fastify's testing guide: build and listen
 * are separate). A cluster worker builds without the admin listener: its primary has it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import cluster from 'node:cluster';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildAdmin, localAdmin } from './admin.js';
import type { Config } from '../config/config.js';
import { createGateway, type Gateway, type GatewayDeps } from '../gateway/gateway.js';
import { checkModuleNamesOnceUp } from '../upstream/module-names.js';
import { learnNamespaces } from '../upstream/site-namespaces.js';
import { buildPublic } from './public-app.js';
import { UpstreamProbe, UpstreamProbeMetrics } from '../upstream/probe.js';

/** How long build() waits for the shared tier (Redis) at start before going on without it. */
const SHARED_TIER_START_WAIT_MS = 2_000;

/**
 * While closing, how often idle keep-alive connections are looked at. A connection is closed
 * when two looks in a row find it idle with nothing read in between, i.e. after 250–500 ms of
 * quiet: a client under load sends its next request well within that, and gets it answered
 * (with `Connection: close`) instead of a reset.
 */
const QUIET_CHECK_MS = 250;

/** Longest wait, while closing, for the connections already in the kernel's accept queue. */
const ACCEPT_QUEUE_WAIT_MS = 2_000;

/** The gateway and its public listener: what a cluster worker runs. */
export interface BuiltPublic {
  readonly gateway: Gateway;
  readonly publicApp: FastifyInstance;
  /** True from the moment close() is called: /readyz answers 503 from then on. */
  readonly shuttingDown: boolean;
  /**
   * Ask the wiki for its namespaces now, retrying until it answers, then now and then
   * (upstream/site-namespaces.ts): started once the process serves, beside the upstream probe, so
   * that a gateway built in a test asks its stand-in nothing it did not ask for.
   */
  learnNamespaces(): void;
  /**
   * Shut down without failing a request: /readyz turns 503, after WIKIEDGE_SHUTDOWN_DRAIN_MS
   * (answers saying `Connection: close`) the listener closes, in-flight requests finish within
   * WIKIEDGE_SHUTDOWN_GRACE_MS, then the admin listener, upstream sockets and Redis are closed.
   */
  close(): Promise<void>;
  /**
   * Close what this gateway holds (the follower, upstream sockets, Redis) once nothing is in
   * flight through it: a reload's old gateway, whose listening socket and connections serve on
   * with the new one (cluster/single.ts). Its listener was never bound.
   */
  retire(): Promise<void>;
}

/** The single process: the gateway, its public listener and its admin listener. */
export interface Built extends BuiltPublic {
  readonly adminApp: FastifyInstance;
  /**
   * The wiki's health in the background (`wikiedge_upstream_up`, /upstreamz), not started:
   * main.ts starts it once the listeners are up (a test gateway does so when it needs it).
   * Its first answer from the wiki also checks WIKIEDGE_MODULES' names (upstream/module-names.ts).
   */
  readonly upstreamProbe: UpstreamProbe;
}

export interface BuildOptions {
  /** false: no admin listener (a cluster worker; the primary serves /metrics, /readyz, /purge). */
  readonly admin?: boolean;
}

export async function build(config: Config, log: Logger, deps?: GatewayDeps): Promise<Built>;
export async function build(config: Config, log: Logger, deps: GatewayDeps, options: { admin: false }): Promise<BuiltPublic>;
export async function build(config: Config, log: Logger, deps: GatewayDeps = {}, options: BuildOptions = {}): Promise<Built | BuiltPublic> {
  const gw = createGateway(config, log, deps);
  const publicApp = buildPublic(gw);
  const drain = new ConnectionDrain(publicApp.server);
  const state = {
    shuttingDown: false,
    get listening() {
      return publicApp.server.listening;
    },
  };
  const probe = options.admin === false ? undefined : upstreamProbe(gw);
  const adminApp =
    probe && buildAdmin(log, localAdmin(gw, state, probe, publicApp), { token: config.adminToken, metricsToken: config.metricsToken, apiPath: config.apiPath });
  try {
    await Promise.all([publicApp.ready(), adminApp?.ready()]);
    // Give the shared tier a moment to connect so the first requests already share, and take the
    // gap it records (cache/tiered-storage.ts open); never wait longer.
    await gw.storage.open(SHARED_TIER_START_WAIT_MS);
  } catch (err) {
    // A gateway that does not start (Redis is not what the configuration says:
    // cache/redis/connection.ts ready) leaves nothing running. A reload refused so kept the
    // half-built one's heartbeat, clients and apps alive beside the serving one, one more per
    // refused SIGHUP (test/in-process/refused-start-leaves-no-timer-running.test.ts).
    // Its change signals too: a gateway following no changes watches the follower's cursor in
    // Redis until they are closed (gateway/gateway.ts endFollowedTtlInRedis).
    await Promise.allSettled([publicApp.close(), adminApp?.close(), gw.upstream.close(), gw.changes.close(), gw.storage.close()]);
    gw.purgeConfirmations.stop();
    gw.accessLog.close();
    throw err;
  }
  gw.follower?.start();
  let stopLearningNamespaces = () => {};
  const built: BuiltPublic = {
    gateway: gw,
    publicApp,
    get shuttingDown() {
      return state.shuttingDown;
    },
    learnNamespaces() {
      stopLearningNamespaces();
      stopLearningNamespaces = learnNamespaces({
        upstream: gw.upstream,
        apiPath: config.apiPath,
        timeoutMs: config.upstreamResponseTimeoutMs,
        log: log.child({ component: 'namespaces' }),
        learned: (ns) => gw.changes.setNamespaces(ns),
      });
    },
    async close() {
      state.shuttingDown = true;
      if (config.shutdownDrainMs > 0) {
        // Clients on kept-alive connections reconnect through the load balancer, which no longer
        // picks this replica once /readyz has failed.
        drain.answerWithConnectionClose();
        log.info({ drainMs: config.shutdownDrainMs }, 'shutting down: /readyz is 503, still serving until the drain delay is over');
        await sleep(config.shutdownDrainMs);
      }
      await drain.closeListener();
      const forceClose = setTimeout(() => {
        log.warn({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: closing remaining connections');
        publicApp.server.closeAllConnections();
      }, config.shutdownGraceMs);
      forceClose.unref();
      try {
        // Resolves when the last connection is gone (Fastify with return503OnClosing: false
        // answers what still arrives on open connections normally, with Connection: close).
        await publicApp.close();
      } finally {
        clearTimeout(forceClose);
        drain.stop();
      }
      await adminApp?.close();
      await probe?.stop();
      await closeGateway();
    },
    async retire() {
      await publicApp.close();
      await closeGateway();
    },
  };
  const closeGateway = async () => {
    // A miss's store runs after its answer (steps/flow.ts): it still needs Redis and its lock.
    await gw.afterAnswers.settled(config.shutdownGraceMs);
    await gw.follower?.stop();
    stopLearningNamespaces();
    gw.purgeConfirmations.stop();
    await gw.changes.close();
    await Promise.all([gw.upstream.close(), gw.storage.close()]);
    gw.accessLog.close();
  };
  return adminApp && probe ? Object.assign(built, { adminApp, upstreamProbe: probe }) : built;
}

/** The single process's probe of the wiki, on the gateway's registry and upstream client. */
function upstreamProbe(gw: Gateway): UpstreamProbe {
  const { config, log } = gw;
  return new UpstreamProbe({
    upstream: gw.upstream,
    apiPath: config.apiPath,
    intervalMs: config.upstreamProbeMs,
    timeoutMs: config.upstreamProbeTimeoutMs,
    metrics: new UpstreamProbeMetrics(gw.registry),
    log: log.child({ component: 'upstream-probe' }),
    onChange: checkModuleNamesOnceUp({
      upstream: gw.upstream,
      apiPath: config.apiPath,
      names: Object.keys(config.modules),
      timeoutMs: config.upstreamResponseTimeoutMs,
      log,
    }),
  });
}

/**
 * Closing the public listener without failing a request, on Node 20's http server:
 *
 * - Under load Node accepts about one connection per event-loop turn, so the kernel's accept
 *   queue can hold connections for hundreds of milliseconds, their requests already sent; closing
 *   the listener makes the kernel reset them. So before closing, the gateway connects to its own
 *   listener and waits until it accepts that connection: the queue is first in, first out, so
 *   everything queued before it has been accepted too.
 * - `server.close()` stops accepting, then calls `server.closeIdleConnections()`, which destroys
 *   every keep-alive connection that has no request *being parsed*. Under load many of those
 *   already hold the client's next request, unread in the socket buffer: destroying them resets
 *   requests the client has sent. So closeIdleConnections is replaced, for this server and only
 *   once closing starts, by a look every QUIET_CHECK_MS that closes a connection only when it
 *   stayed quiet (no request, no byte read) from one look to the next.
 * - A connection with a request in flight is never closed before its answer is sent (up to the
 *   grace period): answers not started yet get `Connection: close` (Node then ends the socket
 *   after that answer), and so does every request that arrives while closing (Fastify adds it
 *   too once closing), so busy clients leave by themselves, between requests.
 *
 * What this guarantees: a request on a connection the gateway accepted before it closed its
 * listener is answered (within the grace period), and after that a new connection is refused
 * (ECONNREFUSED), which a client or load balancer can safely retry elsewhere. What it cannot:
 * a client that sends on a keep-alive connection at the very moment the gateway closes it after
 * its quiet interval sees the connection close without an answer, and a connection that reaches
 * the accept queue in the instant between the last accept and the close is reset by the kernel.
 * Both races are inherent to HTTP/1.1 over TCP; RFC 9112 §9.3.1 lets clients retry an idempotent
 * request then (undici, browsers and most proxies do for GET), and WIKIEDGE_SHUTDOWN_DRAIN_MS
 * behind a load balancer that follows /readyz makes them vanishingly rare (no new connections
 * arrive by the time the listener closes).
 */
export class ConnectionDrain {
  private readonly connections = new Map<Socket, { last: ServerResponse | undefined; quietSince?: QuietMark }>();
  private connectionClose = false;
  private timer: NodeJS.Timeout | undefined;
  /** Our own connection to the listener, while closing: when it is accepted, the queue before it is empty. */
  private marker: { socket: Socket; accepted: () => void } | undefined;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      if (this.marker && socket.remotePort === this.marker.socket.localPort && socket.remoteAddress === this.marker.socket.localAddress) {
        socket.destroy();
        this.marker.accepted();
        return;
      }
      this.connections.set(socket, { last: undefined });
      socket.once('close', () => this.connections.delete(socket));
    });
    // Before the listener that answers (the fresh-hit path may answer within it).
    server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
      const conn = this.connections.get(req.socket);
      if (conn) conn.last = res;
      if (this.connectionClose) res.shouldKeepAlive = false;
    });
  }

  /**
   * From now on every answer says `Connection: close`, including those already on their way.
   * `shouldKeepAlive = false` makes Node write that header and end the socket after the answer,
   * without a setHeader() that would send writeHead's header array down its slower merging path.
   */
  answerWithConnectionClose(): void {
    this.connectionClose = true;
    for (const { last } of this.connections.values()) {
      if (last && !last.headersSent) last.shouldKeepAlive = false;
    }
  }

  /**
   * Accept what is queued, stop accepting, then answer with `Connection: close` and close
   * connections as they go quiet. In this order: a client told to reconnect before the listener
   * is closed could land in the accept queue. (Fastify's close() closes the listener only after
   * its hooks; its own server.close() call then just waits for the last connection.)
   */
  async closeListener(): Promise<void> {
    await this.acceptQueued();
    // server.close() calls it (and so does Fastify's later call): the looks are the timer's.
    this.server.closeIdleConnections = () => undefined;
    this.server.close();
    this.answerWithConnectionClose();
    this.timer = setInterval(() => this.closeQuiet(), QUIET_CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The client connections open now. */
  sockets(): IterableIterator<Socket> {
    return this.connections.keys();
  }

  private async acceptQueued(): Promise<void> {
    const address = this.server.address();
    // In a cluster worker the queue is the primary's (round-robin) or shared with the other
    // workers, so a marker could be accepted anywhere: nothing to learn from it.
    if (cluster.isWorker || address === null || typeof address === 'string') return;
    const host = address.address === '0.0.0.0' ? '127.0.0.1' : address.address === '::' ? '::1' : address.address;
    const accepted = new Promise<void>((resolve) => {
      const socket = connect({ host, port: address.port });
      socket.on('error', () => resolve()); // refused or reset: nothing more to wait for
      this.marker = { socket, accepted: resolve };
    });
    const gaveUp = sleep(ACCEPT_QUEUE_WAIT_MS, undefined, { ref: false });
    await Promise.race([accepted, gaveUp]);
    this.marker?.socket.destroy();
    this.marker = undefined;
  }

  private closeQuiet(): void {
    for (const [socket, conn] of this.connections) {
      const busy = conn.last !== undefined && !conn.last.writableFinished;
      if (busy) {
        conn.quietSince = undefined;
        continue;
      }
      const mark: QuietMark = { last: conn.last, bytesRead: socket.bytesRead };
      if (conn.quietSince && conn.quietSince.last === mark.last && conn.quietSince.bytesRead === mark.bytesRead) {
        socket.destroy();
      } else {
        conn.quietSince = mark;
      }
    }
  }
}

/** What an idle connection looked like when it was first seen idle. */
interface QuietMark {
  readonly last: ServerResponse | undefined;
  readonly bytesRead: number;
}
