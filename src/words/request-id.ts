/**
 * X-Request-Id: the proxy in front's when it is a plain token and the peer is one of
 * WIKIEDGE_TRUSTED_PROXIES (as their X-Forwarded-For is), else generated: a client's own would
 * let it give its requests the ids of others' in the logs and at the wiki.
 * Generated ids are a random per-process prefix and a counter: unique across replicas and
 * restarts like a random id, but a string concatenation instead of 12 random bytes per request.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;

/**
 * `peer` and `trusted` (WIKIEDGE_TRUSTED_PROXIES): the peer is matched against the list only when
 * there is an id to adopt (rare from clients); without `trusted` (a request Node's parser
 * refused) an id is always generated; the admin listener passes EVERY_PEER.
 */
export function requestIdOf(headers: IncomingHttpHeaders, peer?: string, trusted?: { has(address: string | undefined): boolean }): string {
  const given = headers['x-request-id'];
  if (typeof given === 'string' && trusted !== undefined && REQUEST_ID.test(given) && trusted.has(peer)) return given;
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}

/** The admin listener's peers are the operator's (probes, Prometheus, scripts): their ids are kept. */
export const EVERY_PEER = { has: (_address: string | undefined): boolean => true };
