/**
 * Everything that is not api.php (index.php, load.php, uploads, …) is streamed through untouched,
 * both ways. A client that goes away aborts the upstream request, which releases its socket: the
 * leak that http-proxy is known for (its issue 1586).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { fromUpstreamFailure, failureKind, renderPlainError } from './errors.js';
import { downstreamResponseHeaders, upstreamRequestHeaders } from './forwarding.js';
import type { Gateway, RequestTarget } from './gateway.js';
import { hasRequestBody } from './api/flow.js';

export async function streamThrough(
  gw: Gateway,
  request: FastifyRequest,
  reply: FastifyReply,
  target: RequestTarget,
) {
  request.edge.disposition = 'pass';
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  const started = gw.now();
  gw.metrics.upstreamRequests.inc({ reason: 'pass' });
  try {
    const res = await gw.upstream.request({
      method: request.method,
      path: target.upstreamPath,
      headers: upstreamRequestHeaders(request.headers, {
        peerAddress: request.socket.remoteAddress ?? '',
        peerTrusted: request.edge.peerTrusted,
        protocol: 'http',
        requestId: request.id,
        sharedFetch: false,
      }),
      body: hasRequestBody(request) ? request.raw : null,
      signal: controller.signal,
    });
    request.edge.upstreamMs = gw.now() - started;
    gw.metrics.upstreamDuration.observe({ outcome: 'headers' }, (gw.now() - started) / 1000);
    const headers = downstreamResponseHeaders(res.headers, { dropLength: false });
    reply.code(res.statusCode).headers(headers);
    reply.header('x-cache', 'pass');
    reply.header('x-request-id', request.id);
    return reply.send(res.body);
  } catch (err) {
    const gatewayError = fromUpstreamFailure(err);
    // The client left; nobody is there to answer (the close listener counts it as 499).
    if (controller.signal.aborted) return reply;
    gw.metrics.upstreamFailure(failureKind(gatewayError));
    request.edge.disposition = 'error';
    request.edge.errorCode = gatewayError.code;
    request.log.warn({ code: gatewayError.code, cause: String(err) }, 'upstream failure');
    const rendered = renderPlainError(gatewayError);
    return reply
      .code(rendered.status)
      .headers(rendered.headers)
      .header('x-cache', 'error')
      .send(rendered.body);
  }
}
