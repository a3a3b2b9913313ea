/**
 * The admin listener: /healthz, /readyz, /metrics, POST /purge. One set of routes for both ways
 * the gateway runs: a single process answers from its own gateway (localAdmin), a cluster primary
 * from its workers over IPC (cluster.ts). The routes only parse, pick the status and log; what
 * they report comes from an AdminBackend.
 */
import Fastify, { type FastifyBaseLogger, LogController, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { type PurgeMessage, type PurgeResult, purgeEverywhere } from './cache/purge.js';
import type { Gateway } from './gateway.js';

/** What /readyz reports besides its status code. */
export type Readiness =
  | { readonly ready: true }
  | {
      readonly ready: false;
      readonly reason?: 'shutting-down' | 'no-worker-listening';
      readonly upstreamStatus?: number;
      readonly error?: string;
    };

/** An admin purge's answer: what was removed, and in a cluster how many workers applied it. */
export interface AdminPurgeResult extends PurgeResult {
  /** Workers that applied the purge (cluster only). */
  readonly workers?: number;
  /** Workers that did not answer in time (cluster only): their entries may still be there. */
  readonly missedWorkers?: number;
}

export interface AdminBackend {
  /** True from the moment shutdown starts: /readyz then answers 503, without asking the wiki. */
  readonly shuttingDown: boolean;
  readiness(): Promise<Readiness>;
  metrics(): Promise<{ readonly contentType: string; readonly body: string }>;
  /** Apply an admin purge wherever it must go (Redis, every local tier). */
  purge(message: PurgeMessage): Promise<AdminPurgeResult>;
}

export function buildAdmin(log: Logger, backend: AdminBackend): FastifyInstance {
  const app = Fastify({
    loggerInstance: log.child({ listener: 'admin' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    // A load balancer following /readyz stops sending as soon as shutdown starts.
    const readiness: Readiness = backend.shuttingDown
      ? { ready: false, reason: 'shutting-down' }
      : await backend.readiness();
    if (readiness.ready) return { status: 'ready' };
    const { ready: _ready, ...why } = readiness;
    return reply.code(503).send({ status: 'unready', ...why });
  });

  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await backend.metrics();
    reply.header('content-type', contentType);
    return body;
  });

  /** Admin purges: `?module=wbavailablebadges`, `?prefix=/w/api.php?action=query`, or `?all=1`. */
  app.post('/purge', async (request, reply) => {
    const q = request.query as Record<string, string | undefined>;
    let message: PurgeMessage;
    if (q['all'] === '1') message = { kind: 'all' };
    else if (q['module']) message = { kind: 'module', module: q['module'] };
    else if (q['prefix']) message = { kind: 'prefix', prefix: q['prefix'] };
    else return reply.code(400).send({ error: 'give one of module=, prefix= or all=1' });
    const result = await backend.purge(message);
    request.log.info({ ...result, ...q }, 'admin purge');
    // A worker that did not answer may still hold the entries: the caller should retry.
    return reply.code(result.missedWorkers ? 503 : 200).send(result);
  });
  return app;
}

/** /readyz's question to the wiki: does api.php answer 200 within WIKIEDGE_READY_TIMEOUT_MS? */
export async function probeWiki(gw: Gateway): Promise<Readiness> {
  try {
    const res = await gw.upstream.request({
      method: 'GET',
      path: `${gw.config.apiPath}?action=query&format=json`,
      headers: { 'user-agent': 'wikiedge-readyz' },
      signal: AbortSignal.timeout(gw.config.readyTimeoutMs),
    });
    await res.body.dump();
    return res.statusCode === 200 ? { ready: true } : { ready: false, upstreamStatus: res.statusCode };
  } catch (err) {
    return { ready: false, error: (err as Error).name };
  }
}

/** The single process's admin backend: its own gateway. */
export function localAdmin(gw: Gateway, state: { readonly shuttingDown: boolean }): AdminBackend {
  return {
    get shuttingDown() {
      return state.shuttingDown;
    },
    readiness: () => probeWiki(gw),
    metrics: async () => ({ contentType: gw.registry.contentType, body: await gw.registry.metrics() }),
    // With Redis: removed there too, and on every replica through the purge channel.
    purge: (message) => purgeEverywhere(gw.store, gw.redis, message),
  };
}
