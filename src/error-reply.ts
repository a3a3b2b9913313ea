/**
 * The one writer of the gateway's own error answers, for every route (@fastify/reply-from has
 * one onError): api.php gets MediaWiki's error shape in the request's format (errors.ts
 * renderApiError), everything else plain text. Every such answer says `X-Cache: error`, carries
 * the request id and, for 429/503, `Retry-After`; the record notes the error code.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ErrorFormat, GatewayError, fromUpstreamFailure, renderApiError, renderPlainError } from './errors.js';
import type { Gateway } from './gateway.js';
import { noteError } from './request-record.js';

export interface ErrorReplyOptions {
  /** The api.php request's format: MediaWiki's error shape in it. Absent: plain text. */
  readonly api?: ErrorFormat | undefined;
  /** Extra headers (e.g. `Allow` on a refused PURGE). */
  readonly headers?: Readonly<Record<string, string>>;
}

export function replyWithError(
  gw: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  failure: unknown,
  options: ErrorReplyOptions = {},
): FastifyReply {
  const err = failure instanceof GatewayError ? failure : fromUpstreamFailure(failure);
  noteError(request, err.code);
  if (err.status >= 500) request.log.warn({ code: err.code, cause: String(err.cause ?? '') }, 'gateway error');
  const rendered = options.api ? renderApiError(err, options.api) : renderPlainError(err);
  if (options.api) gw.metrics.apiError(err.code);
  reply.code(rendered.status).headers(rendered.headers);
  if (options.headers) reply.headers(options.headers);
  reply.header('x-cache', 'error');
  reply.header('x-request-id', request.id);
  return reply.send(rendered.body);
}
