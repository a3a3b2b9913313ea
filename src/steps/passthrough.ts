/**
 * Everything that is not api.php (index.php, load.php, uploads, …) is streamed through untouched,
 * both ways. A client that goes away aborts the upstream request, which releases its socket: the
 * leak that http-proxy is known for (its issue 1586).
 *
 * Untouched, but not unseen: a session holder's logout through index.php (the answer deletes its
 * session cookie) or any write on these paths evicts the session's cache entries before the
 * answer goes out (steps/session-lifecycle.ts), as on api.php.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { replyWithError } from './error-reply.js';
import { ClientClosedError, GatewayError, fromUpstreamFailure, failureKind } from '../words/errors.js';
import { admit, type Release, releaseWith, requestBodyOf } from './admission.js';
import { downstreamResponseHeaders, forwardedView, headerString } from '../http/forwarding.js';
import { clientAddress } from '../limits/client-key.js';
import type { AddressMatcher } from '../words/address-list.js';
import { mayCarryCredentials, requestCookieNames, sessionIdentityFromHeaders } from '../mediawiki/identity.js';
import { learnSessionUser, type SessionParts, settleSession } from './session-lifecycle.js';
import { wrote } from '../mediawiki/modules.js';
import type { Metrics } from '../observe/metrics.js';
import { normalizeSetCookies } from '../mediawiki/set-cookie.js';
import type { Logger } from 'pino';
import { noteOutcome, wikiRequestHeaders } from './request-record.js';
import type { Gateway, RequestTarget } from '../gateway/gateway.js';

export async function streamThrough(gw: Gateway, request: FastifyRequest, reply: FastifyReply, target: RequestTarget) {
  noteOutcome(request, { disposition: 'pass' });
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  let release: Release | undefined;
  try {
    // Read before a turn at the wiki is taken: a slow body holds our socket, not the wiki's.
    const body = await requestBodyOf(request.raw, gw.config.requestBodyBufferBytes);
    release = await admit(gw, request.raw, 'uncached', controller.signal);
    const started = gw.now();
    gw.metrics.upstreamRequests.inc({ reason: 'pass' });
    const res = await gw.upstream.request({
      method: request.method,
      path: target.upstreamPath,
      headers: wikiRequestHeaders(request, { sharedFetch: false }),
      body,
      signal: controller.signal,
    });
    // The turn lasts as long as the wiki's answer streams (a slow reader holds it: its share is bounded).
    releaseWith(res.body, release);
    noteOutcome(request, { disposition: 'pass', upstreamMs: gw.now() - started });
    gw.metrics.upstreamDuration.observe({ outcome: 'headers' }, (gw.now() - started) / 1000);
    await settleStreamedSession(gw, request, target, res.headers['set-cookie']);
    const headers = downstreamResponseHeaders(res.headers, { dropLength: false });
    reply.code(res.statusCode).headers(headers);
    reply.header('x-cache', 'pass');
    reply.header('x-request-id', request.id);
    return reply.send(res.body);
  } catch (err) {
    release?.();
    // The client left; nobody is there to answer (the record counts it as 499).
    if (controller.signal.aborted || err instanceof ClientClosedError) return reply;
    // A refusal of ours (429/503) is not the wiki's failure.
    if (!(err instanceof GatewayError)) gw.metrics.upstreamFailure(failureKind(fromUpstreamFailure(err)));
    return replyWithError(gw, request, reply, err);
  }
}

/** Only requests that may carry credentials are looked at: the others have no session to settle. */
async function settleStreamedSession(
  gw: SessionParts & { readonly metrics: Metrics; readonly trusted: AddressMatcher },
  request: FastifyRequest,
  target: RequestTarget,
  setCookie: string | string[] | undefined,
): Promise<void> {
  const view = forwardedView(request.headers);
  // A login through index.php (Special:UserLogin) sets the session and names its user.
  learnSessionUser(gw, view, setCookie, undefined, undefined);
  if (!mayCarryCredentials(view, gw.identityRules)) return;
  // Not api.php: its login suppression (callback=, origin=*, Treat-as-Untrusted) does not apply.
  const identity = sessionIdentityFromHeaders(view, gw.identityRules, () =>
    clientAddress(request.socket.remoteAddress, headerString(request.headers['x-forwarded-for']), gw.trusted),
  );
  if (identity.kind !== 'session') return;
  const lines = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [setCookie];
  const ended = lines.length > 0 && normalizeSetCookies(lines, requestCookieNames(view.cookie), gw.cookieNames, Date.now()).sessionEnded;
  await settleSession(gw.storage, gw.metrics, request.log as Logger, identity, { ended, wrote: wrote(request.method, target.rawQuery, target.rawPath) });
}
