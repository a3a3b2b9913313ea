/**
 * build(config) returns the two Fastify instances (public and admin) without listening, so tests
 * can use them on port 0 (Fastify's testing guide: build and listen are separate).
 */
import Fastify, { type FastifyBaseLogger, LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type PurgeMessage, purgeEverywhere } from './cache/purge.js';
import type { Config } from './config.js';
import { createGateway, type Gateway, type GatewayDeps } from './gateway.js';
import { buildPublic } from './public-app.js';

/** How long build() waits for Redis at start before going on without it. */
const REDIS_START_WAIT_MS = 2_000;

export interface Built {
  readonly gateway: Gateway;
  readonly publicApp: FastifyInstance;
  readonly adminApp: FastifyInstance;
  /** Stop accepting, finish in-flight requests within the grace period, close upstream sockets and Redis. */
  close(): Promise<void>;
}

export async function build(config: Config, log: Logger, deps: GatewayDeps = {}): Promise<Built> {
  const gw = createGateway(config, log, deps);
  const publicApp = buildPublic(gw);
  const adminApp = buildAdmin(gw);
  await Promise.all([publicApp.ready(), adminApp.ready()]);
  // Give Redis a moment to connect so the first requests already share; never wait longer.
  if (gw.redis && !(await gw.redis.ready(REDIS_START_WAIT_MS))) {
    log.warn({ waitedMs: REDIS_START_WAIT_MS }, 'redis not ready at start: starting without it, it is used as soon as it answers');
  }
  return {
    gateway: gw,
    publicApp,
    adminApp,
    async close() {
      const forceClose = setTimeout(() => {
        log.warn({ graceMs: config.shutdownGraceMs }, 'shutdown grace period over: closing remaining connections');
        publicApp.server.closeAllConnections();
      }, config.shutdownGraceMs);
      // Keep-alive connections become idle as their last response ends: close them as they do,
      // rather than waiting for the grace period.
      const reapIdle = setInterval(() => publicApp.server.closeIdleConnections(), 50);
      forceClose.unref();
      reapIdle.unref();
      try {
        await publicApp.close();
      } finally {
        clearTimeout(forceClose);
        clearInterval(reapIdle);
      }
      await adminApp.close();
      await Promise.all([gw.upstream.close(), gw.redis?.close()]);
    },
  };
}

function buildAdmin(gw: Gateway): FastifyInstance {
  const app = Fastify({
    loggerInstance: gw.log.child({ listener: 'admin' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    try {
      const res = await gw.upstream.request({
        method: 'GET',
        path: `${gw.config.apiPath}?action=query&format=json`,
        headers: { 'user-agent': 'wikiedge-readyz' },
        signal: AbortSignal.timeout(gw.config.readyTimeoutMs),
      });
      await res.body.dump();
      if (res.statusCode !== 200)
        return reply.code(503).send({ status: 'unready', upstreamStatus: res.statusCode });
      return { status: 'ready' };
    } catch (err) {
      return reply.code(503).send({ status: 'unready', error: (err as Error).name });
    }
  });

  app.get('/metrics', async (_request, reply) => {
    reply.header('content-type', gw.registry.contentType);
    return gw.registry.metrics();
  });

  /** Admin purges: `?module=wbavailablebadges`, `?prefix=/w/api.php?action=query`, or `?all=1`. */
  app.post('/purge', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    let message: PurgeMessage;
    if (q['all'] === '1') message = { kind: 'all' };
    else if (q['module']) message = { kind: 'module', module: q['module'] };
    else if (q['prefix']) message = { kind: 'prefix', prefix: q['prefix'] };
    else return reply.code(400).send({ error: 'give one of module=, prefix= or all=1' });
    // With Redis: removed there too, and on every replica through the purge channel.
    const result = await purgeEverywhere(gw.store, gw.redis, message);
    gw.log.info({ ...result, ...q }, 'admin purge');
    return result;
  });
  return app;
}
