/**
 * X-Request-Id: the client's (or the proxy in front's) when it is a plain token, else generated.
 * Generated ids are a random per-process prefix and a counter: unique across replicas and
 * restarts like a random id, but a string concatenation instead of 12 random bytes per request.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const REQUEST_ID_PREFIX = randomBytes(6).toString('hex');
let requestCounter = 0;

export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers['x-request-id'];
  if (typeof given === 'string' && REQUEST_ID.test(given)) return given;
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${REQUEST_ID_PREFIX}-${requestCounter.toString(36)}`;
}
