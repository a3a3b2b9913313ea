/**
 * The one client for the wiki: an undici Pool per upstream origin with keep-alive and explicit
 * connect, headers and body timeouts (undici: the fastest Node client measured for this gateway,
 * and it returns exact-size buffers; http-proxy is unmaintained and leaks on client aborts).
 */
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';

export interface UpstreamOptions {
  readonly origin: URL;
  readonly connectTimeoutMs: number;
  readonly responseTimeoutMs: number;
  readonly connections: number;
}

export interface UpstreamRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string | string[]>;
  readonly body?: Buffer | Readable | null;
  readonly signal?: AbortSignal;
}

export type UpstreamResponse = Dispatcher.ResponseData;

export class Upstream {
  readonly pool: Pool;

  constructor(readonly options: UpstreamOptions) {
    this.pool = new Pool(options.origin, {
      connections: options.connections,
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.responseTimeoutMs,
      bodyTimeout: options.responseTimeoutMs,
      keepAliveTimeout: 4_000,
    });
  }

  request(req: UpstreamRequest): Promise<UpstreamResponse> {
    return this.pool.request({
      method: req.method as Dispatcher.HttpMethod,
      path: req.path,
      headers: req.headers,
      body: req.body ?? null,
      ...(req.signal && { signal: req.signal }),
    });
  }

  /** Open sockets to the wiki (for tests and metrics). */
  get connected(): number {
    return this.pool.stats.connected;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
