/**
 * One home for the gateway's own errors: a stable code, an HTTP status, and a body in MediaWiki's
 * own error shape so API clients handle a gateway failure with the code they already have.
 *
 * MediaWiki (ApiMain::handleException / ApiErrorFormatter_BackCompat) answers
 *   formatversion=1: {"error":{"code":"…","info":"…","*":"See …"}}
 *   formatversion=2: {"error":{"code":"…","info":"…","docref":"See …"}}
 * with the header `MediaWiki-API-Error: <code>` and `Cache-Control: private, must-revalidate, max-age=0`.
 */

export const GATEWAY_ERRORS = {
  'wikiedge-upstream-unreachable': { status: 502, info: 'The wiki could not be reached.' },
  'wikiedge-upstream-reset': { status: 502, info: 'The wiki closed the connection before answering.' },
  'wikiedge-upstream-bad-response': { status: 502, info: 'The wiki sent an answer the gateway cannot read.' },
  'wikiedge-upstream-timeout': { status: 504, info: 'The wiki did not answer in time.' },
  'wikiedge-bad-request': { status: 400, info: 'The request is malformed.' },
  'wikiedge-client-timeout': { status: 408, info: 'The request was not received in time.' },
  'wikiedge-uri-too-long': { status: 414, info: 'The request URL is too long.' },
  'wikiedge-not-acceptable': { status: 406, info: 'Accept-Encoding refuses identity and accepts neither gzip nor br.' },
  'wikiedge-headers-too-large': { status: 431, info: 'The request headers are too large.' },
  'wikiedge-purge-forbidden': { status: 405, info: 'PURGE is only accepted from trusted addresses.' },
  'wikiedge-method-not-allowed': { status: 405, info: 'The gateway does not forward this method.' },
  'wikiedge-rate-limited': { status: 429, info: 'This client has made too many uncached requests; retry after the time in Retry-After.' },
  'wikiedge-overloaded': { status: 503, info: 'The wiki is busy; retry after the time in Retry-After.' },
  'wikiedge-internal': { status: 500, info: 'The gateway failed to handle the request.' },
} as const satisfies Record<string, { status: number; info: string }>;

export type GatewayErrorCode = keyof typeof GATEWAY_ERRORS;

export class GatewayError extends Error {
  readonly status: number;
  /** Sent as Retry-After (RFC 9110 §10.2.3) with 429 and 503. */
  readonly retryAfterSeconds: number | undefined;
  /**
   * A refusal made at once (limits/refusal-delay.ts): its answer waits out the refusal delay,
   * in the one error writer, after the request has let go of whatever it held (the Redis lock,
   * the coalesced fetch, its turn), so that only the refused client waits.
   */
  readonly answerAfterDelay: boolean;
  constructor(
    readonly code: GatewayErrorCode,
    options?: { cause?: unknown; info?: string; retryAfterSeconds?: number; answerAfterDelay?: boolean },
  ) {
    // These are answers, not faults: where one was made says nothing (a failure's own stack is
    // in its cause), and capturing the stack was the dearest part of a 429 under a flood
    // (~8 % of the gateway's CPU, docs/BENCHMARKS.md flood). wikiedge-internal keeps its stack.
    const stackTraceLimit = Error.stackTraceLimit;
    if (code !== 'wikiedge-internal') Error.stackTraceLimit = 0;
    super(options?.info ?? GATEWAY_ERRORS[code].info, options?.cause ? { cause: options.cause } : undefined);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'GatewayError';
    this.status = GATEWAY_ERRORS[code].status;
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.answerAfterDelay = options?.answerAfterDelay ?? false;
  }
}

/** The client went away before the answer: nothing to send, and not the wiki's fault. */
export class ClientClosedError extends Error {
  constructor() {
    super('client closed the request');
    this.name = 'ClientClosedError';
  }
}

/** The bits of the request that choose the error's shape (from PHP's view of the query). */
export interface ErrorFormat {
  format?: string | undefined;
  formatversion?: string | undefined;
  callback?: string | undefined;
  errorformat?: string | undefined;
}

/**
 * ApiFormatJson::execute(): a callback loses every character but these (no reflected script),
 * and the answer is JSONP whatever is left.
 */
const NOT_IN_A_CALLBACK = /[^\][.'"_A-Za-z0-9]/g;

/**
 * The error formats ApiMain::__construct gives an ApiErrorFormatter (`errors`, one message per
 * error); any other value, `bc` its default, the back-compatible `error` object
 * (ApiErrorFormatter_BackCompat).
 */
const MODERN_ERROR_FORMATS: ReadonlySet<string> = new Set(['plaintext', 'wikitext', 'html', 'raw', 'none']);

/**
 * One error as ApiErrorFormatter::formatMessageInternal writes it for `errorformat`: its text under
 * `text` (plaintext, wikitext) or `html`, its message key and parameters (raw), or its code alone
 * (none); a content field is `*` under formatversion 1 (ApiResult::META_CONTENT).
 */
function modernError(err: GatewayError, errorformat: string, fv2: boolean): Record<string, unknown> {
  const content = (name: string, value: string) => ({ [fv2 ? name : '*']: value });
  const described =
    errorformat === 'html'
      ? content('html', xmlEscape(err.message))
      : errorformat === 'raw'
        ? { key: err.code, params: [] }
        : errorformat === 'none'
          ? {}
          : content('text', err.message);
  return { code: err.code, ...described, module: 'main' };
}
const DOCREF = 'This error was produced by the wikiedge gateway in front of the wiki.';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Render a gateway error as MediaWiki would render an API error for this request's format. */
export function renderApiError(err: GatewayError, fmt: ErrorFormat): RenderedError {
  const headers: Record<string, string> = {
    'mediawiki-api-error': err.code,
    'cache-control': 'private, must-revalidate, max-age=0',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(err.retryAfterSeconds !== undefined && { 'retry-after': String(err.retryAfterSeconds) }),
  };
  const fv2 = fmt.formatversion === '2' || fmt.formatversion === 'latest';
  const errorformat = fmt.errorformat !== undefined && MODERN_ERROR_FORMATS.has(fmt.errorformat) ? fmt.errorformat : undefined;
  const payload = errorformat
    ? fv2
      ? { errors: [modernError(err, errorformat, true)], docref: DOCREF }
      : { errors: [modernError(err, errorformat, false)], '*': DOCREF }
    : {
        error: fv2 ? { code: err.code, info: err.message, docref: DOCREF } : { code: err.code, info: err.message, '*': DOCREF },
      };

  if (fmt.format === 'xml' || fmt.format === 'xmlfm') {
    headers['content-type'] = 'text/xml; charset=utf-8';
    return { status: err.status, headers, body: xmlError(err, errorformat) };
  }
  if (fmt.format === 'php') {
    // ApiFormatPhp::execute: PHP's serialize() of the same result, with ApiFormatPhp::getMimeType.
    headers['content-type'] = 'application/vnd.php.serialized; charset=utf-8';
    return { status: err.status, headers, body: phpSerialize(payload) };
  }
  const json = JSON.stringify(payload);
  if (fmt.callback !== undefined) {
    headers['content-type'] = 'text/javascript; charset=utf-8';
    return { status: err.status, headers, body: `/**/${fmt.callback.replace(NOT_IN_A_CALLBACK, '')}(${json})` };
  }
  headers['content-type'] = 'application/json; charset=utf-8';
  return { status: err.status, headers, body: json };
}

/**
 * The same error in format=xml (ApiFormatXml): a message's content field (`text`, `html`, the
 * back-compatible docref) is the element's text, the rest its attributes; the docref of
 * `errors` is an element of its own.
 */
function xmlError(err: GatewayError, errorformat: string | undefined): string {
  const code = xmlEscape(err.code);
  const docref = `<docref xml:space="preserve">${xmlEscape(DOCREF)}</docref>`;
  if (errorformat === undefined)
    return `<?xml version="1.0"?><api><error code="${code}" info="${xmlEscape(err.message)}" xml:space="preserve">${xmlEscape(DOCREF)}</error></api>`;
  const error =
    errorformat === 'none'
      ? `<error code="${code}" module="main" />`
      : errorformat === 'raw'
        ? `<error code="${code}" key="${code}" module="main"><params /></error>`
        : `<error code="${code}" module="main" xml:space="preserve">${xmlEscape(err.message)}</error>`;
  return `<?xml version="1.0"?><api><errors>${error}</errors>${docref}</api>`;
}

/** Everything that is not api.php gets a plain-text error, as a generic proxy would send. */
export function renderPlainError(err: GatewayError): RenderedError {
  return {
    status: err.status,
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
      ...(err.retryAfterSeconds !== undefined && { 'retry-after': String(err.retryAfterSeconds) }),
    },
    body: `${err.status} ${err.message}\n`,
  };
}

/**
 * PHP's serialize() of what an error holds (strings, lists, string-keyed maps): a list is an
 * array keyed 0…n-1, a string's length is its UTF-8 bytes (ext/standard/var.c
 * php_var_serialize_intern).
 */
export function phpSerialize(value: unknown): string {
  if (typeof value === 'string') return `s:${Buffer.byteLength(value)}:"${value}";`;
  if (typeof value === 'number' && Number.isInteger(value)) return `i:${value};`;
  if (typeof value === 'boolean') return `b:${value ? 1 : 0};`;
  if (Array.isArray(value)) return `a:${value.length}:{${value.map((v, i) => `i:${i};${phpSerialize(v)}`).join('')}}`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    return `a:${entries.length}:{${entries.map(([k, v]) => phpSerialize(k) + phpSerialize(v)).join('')}}`;
  }
  return 'N;';
}

function xmlEscape(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Map a transport failure (undici error codes) to a gateway error: one ladder, keeping the cause,
 * as @fastify/reply-from's index.js does.
 */
export function fromUpstreamFailure(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  // undici's AbortError carries a numeric DOMException code: only string codes name a failure.
  const raw = (err as { code?: unknown } | null)?.code;
  const code = typeof raw === 'string' ? raw : '';
  // undici's HTTPParserError carries no code: the wiki answered something that is not HTTP.
  if (!code && (err as { name?: string } | null)?.name === 'HTTPParserError') {
    return new GatewayError('wikiedge-upstream-bad-response', { cause: err });
  }
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'ETIMEDOUT':
      return new GatewayError('wikiedge-upstream-timeout', { cause: err });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
    case 'UND_ERR_CLOSED':
      return new GatewayError('wikiedge-upstream-reset', { cause: err });
    case 'UND_ERR_INVALID_ARG':
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH':
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return new GatewayError('wikiedge-upstream-bad-response', { cause: err });
    default:
      if (code.startsWith('HPE_')) return new GatewayError('wikiedge-upstream-bad-response', { cause: err });
      return new GatewayError('wikiedge-upstream-unreachable', { cause: err });
  }
}

/** Failure kinds for metrics: a closed set. */
export type UpstreamFailureKind = 'unreachable' | 'reset' | 'bad_response' | 'timeout';
export function failureKind(err: GatewayError): UpstreamFailureKind {
  switch (err.code) {
    case 'wikiedge-upstream-timeout':
      return 'timeout';
    case 'wikiedge-upstream-reset':
      return 'reset';
    case 'wikiedge-upstream-bad-response':
      return 'bad_response';
    default:
      return 'unreachable';
  }
}
