/**
 * The one writer of the gateway's own error answers, for every route (@fastify/reply-from has
 * one onError): api.php gets MediaWiki's error shape in the request's format (words/errors.ts
 * renderApiError), everything else plain text. Every such answer says `X-Cache: error`, carries
 * the request id and, for 429/503, `Retry-After`; the record notes the error code. A refusal
 * made at once is answered after the refusal delay (limits/refusal-delay.ts).
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorFormat, GatewayError, fromUpstreamFailure, renderApiError, renderPlainError } from '../words/errors.js';
import type { Metrics } from '../observe/metrics.js';
import type { RefusalDelay } from '../limits/refusal-delay.js';
import { requestIdOf } from '../http/forwarding.js';
import { noteError } from './request-record.js';

export interface ErrorReplyOptions {
  /** The api.php request's format: MediaWiki's error shape in it. Absent: plain text. */
  readonly api?: ErrorFormat | undefined;
  /** Extra headers (e.g. `Allow` on a refused PURGE). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What an error answer takes: the refusal delay, and the API error count. */
export interface ErrorReplyParts {
  readonly refusalDelay: RefusalDelay;
  readonly metrics: Metrics;
}

export async function replyWithError(
  parts: ErrorReplyParts,
  request: FastifyRequest,
  reply: FastifyReply,
  failure: unknown,
  options: ErrorReplyOptions = {},
): Promise<FastifyReply> {
  const err = failure instanceof GatewayError ? failure : fromUpstreamFailure(failure);
  if (err.answerAfterDelay) await parts.refusalDelay.wait();
  noteError(request, err.code);
  if (err.status >= 500) request.log.warn({ code: err.code, cause: String(err.cause ?? '') }, 'gateway error');
  const rendered = options.api ? renderApiError(err, options.api) : renderPlainError(err);
  if (options.api) parts.metrics.apiError(err.code);
  reply.code(rendered.status).headers(rendered.headers);
  if (options.headers) reply.headers(options.headers);
  reply.header('x-cache', 'error');
  reply.header('x-request-id', request.id);
  return reply.send(rendered.body);
}

/**
 * Node's HTTP parser refuses some requests before any handler sees them: a malformed head (400),
 * headers over maxHeaderSize (431), a client too slow to send its request (408). Fastify would
 * write its own bare answer on the socket (its defaultClientErrorHandler); this one is the
 * gateway's like any other: MediaWiki's error shape (JSON, formatversion 1: the request's
 * format was never read), `X-Cache: error`, an `X-Request-Id` (a fresh one: the request's own
 * headers were never read), and `Connection: close`, since the socket is closed after it. A
 * reset connection gets nothing: there is no one to answer.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refused = new GatewayError(
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? 'wikiedge-client-timeout'
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? 'wikiedge-headers-too-large'
        : 'wikiedge-bad-request',
  );
  const rendered = renderApiError(refused, {});
  const headers = {
    ...rendered.headers,
    'content-length': String(Buffer.byteLength(rendered.body)),
    'x-cache': 'error',
    'x-request-id': requestIdOf({}),
    connection: 'close',
  };
  if (socket.writable) {
    let head = `HTTP/1.1 ${rendered.status} ${STATUS_CODES[rendered.status]!}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    socket.write(`${head}\r\n${rendered.body}`);
  }
  socket.destroy(err);
}
