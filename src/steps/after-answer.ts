/**
 * The after-answer step, one for the miss (flow.ts fetchAndStore) and the pass (pass.ts): what
 * every answer of the wiki goes through before the client or the store sees it.
 */
import type { Logger } from 'pino';
import type { FastifyRequest } from 'fastify';
import type { Metrics } from '../observe/metrics.js';
import { forwardedView, headerString } from '../http/forwarding.js';
import type { Gateway } from '../gateway/gateway.js';
import { learnSessionUser, type SessionParts, settleSession } from './session-lifecycle.js';
import { type Inspected, inspect, setCookies, type WikiAnswer } from './ask-wiki.js';
import { requesterHops } from '../mediawiki/requester-address.js';
import { answerJson } from '../policy/dependencies.js';
import { userNamed } from '../policy/session-users.js';
import type { ApiRequest } from './recv.js';

/**
 * What every answer of the wiki goes through, whether it is to be stored (miss, refresh) or only
 * relayed (pass), in this order: debuginfo stripped and the answer inspected (ask-wiki.ts), the
 * Set-Cookie headers normalised, the session's end or write settled in both tiers
 * (session-lifecycle.ts), the API error counted, and the session's user learned from answers
 * that name it. The answer's JSON is parsed at most once, when something asks for it.
 */
export function afterAnswer(
  gw: Gateway,
  request: FastifyRequest,
  api: ApiRequest,
  fetched: WikiAnswer,
  headers: Record<string, string | string[]>,
  wroteNow: boolean,
): { inspected: Inspected; cookies: ReturnType<typeof setCookies>; json: () => unknown; settling: Promise<void> | undefined } {
  const { res } = fetched;
  const inspected = inspect(gw, fetched, api, requesterHops(headerString(headers['x-forwarded-for']) ?? ''));
  const cookies = setCookies(gw.cookieNames, gw.metrics, request, res.headers['set-cookie']);
  // Most answers settle nothing (settleSession's own first test): no promise to wait for then.
  const settling =
    api.identity.kind === 'session' && (cookies.sessionEnded || wroteNow)
      ? settleSession(gw.storage, gw.metrics, request.log as Logger, api.identity, { ended: cookies.sessionEnded, wrote: wroteNow })
      : undefined;
  countApiError(gw.metrics, res.headers);
  const json = lazyJson(inspected.body, headerString(res.headers['content-type']));
  noteSessionUser(gw, request, api, json, res.headers['set-cookie']);
  return { inspected, cookies, json, settling };
}

/** The answer's JSON, parsed once and only if asked (dependencies, a session's user). */
function lazyJson(body: Buffer | NodeJS.ReadableStream, contentType: string | undefined): () => unknown {
  let parsed: { value: unknown } | undefined;
  return () => (parsed ??= { value: Buffer.isBuffer(body) ? answerJson(body, contentType) : undefined }).value;
}

/**
 * Which user a session belongs to, from the answers that say so (userinfo names the request's
 * session; a login's answer names the user of the session it sets): steps/session-lifecycle.ts
 * learnSessionUser.
 */
function noteSessionUser(parts: SessionParts, request: FastifyRequest, api: ApiRequest, json: () => unknown, setCookie: string | string[] | undefined): void {
  const action = api.modules[0];
  const says = api.modules.includes('userinfo') || action === 'login' || action === 'clientlogin';
  if (!says && setCookie === undefined) return;
  const named = says ? userNamed(json()) : undefined;
  const requestSlot = api.identity.kind === 'session' && api.modules.includes('userinfo') ? api.identity.slot : undefined;
  learnSessionUser(parts, forwardedView(request.headers), setCookie, requestSlot, named);
}

function countApiError(metrics: Metrics, headers: Readonly<Record<string, string | string[] | undefined>>): void {
  const code = headers['mediawiki-api-error'];
  if (code !== undefined) metrics.apiError(String(code));
}
