/**
 * The one client for the wiki: an undici Pool per upstream origin with keep-alive and explicit
 * connect, headers and body timeouts (undici: the fastest Node client measured for this gateway,
 * and it returns exact-size buffers; http-proxy is unmaintained and leaks on client aborts).
 *
 * Two ways to ask: `request`, whose body is a stream (passes, answers that may stream on past a
 * limit, the gateway's own requests), and `fetchWhole`, for an answer the caller reads whole
 * anyway (a miss while debuginfo is inspected): undici's dispatch with a handler that keeps the
 * chunks, without the body stream, its promise and its ticks per chunk and end (undici's own
 * benchmarks rank dispatch first for the same reason; measured here in commit 1010036's message).
 */
import type { IncomingHttpHeaders } from 'node:http';
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

/** What the wiki answered, before its body: every answer has this much, streamed or whole. */
export interface UpstreamHead {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
}

/** An answer read whole. */
export interface WholeAnswer extends UpstreamHead {
  readonly body: Buffer;
}

/** The answer's body grew past the limit `fetchWhole` was given: the request was aborted. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`);
  }
}

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

  /**
   * The answer with its body whole, or AnswerTooLargeError (the request aborted) once the body
   * says or grows past `limit` bytes. No signal: nothing aborts it but the pool's timeouts.
   * Failures are undici's errors, as `request`'s are (words/errors.ts fromUpstreamFailure).
   */
  fetchWhole(req: Omit<UpstreamRequest, 'signal'>, limit: number): Promise<WholeAnswer> {
    return new Promise<WholeAnswer>((resolve, reject) => {
      let statusCode = 0;
      let headers: IncomingHttpHeaders = {};
      const chunks: Buffer[] = [];
      let bytes = 0;
      this.pool.dispatch(
        { method: req.method as Dispatcher.HttpMethod, path: req.path, headers: req.headers, body: req.body ?? null },
        {
          // Its presence marks the handler as undici 7's controller kind (handler/unwrap-handler.js unwrap).
          onRequestStart() {},
          onResponseStart(controller, status, head) {
            // 1xx answers come here too (undici client-h1 onHeaders); the final one overrides them.
            statusCode = status;
            headers = head;
            const length = head['content-length'];
            if (status >= 200 && length !== undefined && Number(length) > limit) controller.abort(new AnswerTooLargeError(limit));
          },
          onResponseData(controller, chunk) {
            bytes += chunk.length;
            if (bytes > limit) return controller.abort(new AnswerTooLargeError(limit));
            chunks.push(chunk);
          },
          onResponseEnd() {
            resolve({ statusCode, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes) });
          },
          onResponseError(_controller, err) {
            reject(err);
          },
        },
      );
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
