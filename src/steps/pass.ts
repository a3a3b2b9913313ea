/**
 * The pass: a request not cacheable by what it asks (recv.ts classify) goes to the wiki as the
 * client sent it and back, through the after-answer step (after-answer.ts) like a miss, and a
 * write it confirms invalidates what it changed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeSignals } from '../invalidation/signals.js';
import { headerString } from '../http/forwarding.js';
import type { Gateway } from '../gateway/gateway.js';
import { requestBodyOf } from './admission.js';
import type { PassReason } from '../words/outcomes.js';
import { MODULE_PARAMETERS, noteFormModule, type Outcome, wikiRequestHeaders } from './request-record.js';
import { askWiki, clientGone, MAX_INSPECT_BYTES, type WikiAnswer } from './ask-wiki.js';
import type { Answer } from './deliver.js';
import { AnswerPolicy } from '../policy/answer-policy.js';
import { changeFromWrite, confirmedWrite, WRITE_PARAMETERS } from '../policy/changes.js';
import { phpStringParam, phpTextParam } from '../mediawiki/php-input.js';
import { writeFacts, wrote } from '../mediawiki/modules.js';
import { type PostedForm, postedForm, requestData } from '../mediawiki/php-post.js';
import type { ApiRequest } from './recv.js';
import { afterAnswer } from './after-answer.js';

/** An answer to deliver, and what the record notes. */
export type AnsweredDelivery = { readonly kind: 'answer'; readonly answer: Answer } & Outcome;

/** The parameters a posted form is read for: the modules it names, and the pages a write names. */
const FORM_PARAMETERS: ReadonlySet<string> = new Set([...MODULE_PARAMETERS, ...WRITE_PARAMETERS]);
const NO_FORM: PostedForm = { kind: 'none' };

/**
 * A successful write that passed through here changed its pages: what depends on them goes
 * before the writer's answer does (changes.ts changeFromWrite), so the writer and everyone else
 * read the write, even where MediaWiki sends no PURGE (protect, merge). Parameters are read as
 * PHP reads them, $_POST over $_GET (mediawiki/php-post.ts: form-encoded and multipart bodies alike).
 * Only a write the answer confirms counts (changes.ts confirms): the answer names the module,
 * so a form too large to be held (an upload) is read from it too; a request that wrote nothing
 * (a read given a token, a form PHP read otherwise than we did) invalidates nothing.
 */
async function invalidateWrite(
  changes: ChangeSignals,
  request: FastifyRequest,
  api: ApiRequest,
  form: PostedForm,
  status: number,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  answer: () => unknown,
): Promise<void> {
  if (!wrote(request.method) || status !== 200 || headers['mediawiki-api-error'] !== undefined) return;
  if (form.kind === 'unreadable') {
    // The module and its pages are named by the answer alone (a form too large to be held: an
    // upload; one past max_input_vars). Not the query string: PHP took the body's values over
    // it, and which they were the gateway cannot tell (a `title` in the query string of a write
    // whose body named another page would invalidate the lists of the query's namespaces).
    const json = answer();
    const action = confirmedWrite(json);
    if (action === undefined) return;
    const change = changeFromWrite(action, () => undefined, changes.namespaces, json);
    if (change) await changes.apply([change]);
    return;
  }
  // `$_POST + $_GET`: a name the body holds in any shape is the body's (an array reads as none,
  // WebRequest::getVal), never the query string's; the value as text (php-input.ts phpTextParam).
  const data = form.kind === 'form' ? requestData(api.query, form.post) : api.query;
  const param = (name: string) => phpTextParam(data, name);
  const json = answer();
  // The module the answer confirms when it is not the one read here (PHP ran another: the two
  // read the form apart), with nothing of the request: as for a form not read at all.
  const named = changeFromWrite(param('action') ?? api.modules[0] ?? '', param, changes.namespaces, json);
  const confirmed = named === undefined ? confirmedWrite(json) : undefined;
  const change = named ?? (confirmed === undefined ? undefined : changeFromWrite(confirmed, () => undefined, changes.namespaces, json));
  if (change) await changes.apply([change]);
}

/** Whether a request may run a write module (a form too large to read may: an upload). */
function mayNameAWrite(api: ApiRequest, form: PostedForm): boolean {
  if (form.kind === 'unreadable') return true;
  const data = form.kind === 'form' ? requestData(api.query, form.post) : api.query;
  const action = phpStringParam(data, 'action') ?? api.modules[0] ?? '';
  return writeFacts(action) !== undefined;
}

const PASSED = { probed: false, path: 'pass', defaults: { ttlPublicSeconds: 0, ttlSessionSeconds: 0 } } as const;

/** Not cacheable: forward as the client sent it; the answer still loses debuginfo and stray cookies. */
export async function pass(gw: Gateway, request: FastifyRequest, reply: FastifyReply, api: ApiRequest, passReason: PassReason): Promise<AnsweredDelivery> {
  const gone = clientGone(reply);
  // Read before a turn at the wiki is taken: a slow body holds our socket, not the wiki's.
  const body = await requestBodyOf(request.raw, gw.config.requestBodyBufferBytes);
  // Read once, for the modules the request runs (its metrics label) and, for a write, the pages it changed.
  const form: PostedForm =
    body === null ? NO_FORM : postedForm(headerString(request.headers['content-type']), Buffer.isBuffer(body) ? body : undefined, FORM_PARAMETERS);
  noteFormModule(gw, request, api.query, form);
  // Read whole (unencoded) to strip debuginfo, and for a write whatever debuginfo is: its answer
  // says whether it saved and what (invalidateWrite); streamed with `off`, a write through the
  // gateway invalidated nothing (test/in-process/write-invalidates-with-debuginfo-off.test.ts).
  const readWhole = gw.config.debuginfo !== 'off' || (wrote(request.method) && mayNameAWrite(api, form));
  const headers = wikiRequestHeaders(request, { sharedFetch: readWhole });
  const fetched: WikiAnswer = await askWiki(
    gw,
    request,
    'pass',
    // A HEAD is asked as a GET, as a cached one is (flow.ts): its headers are then the GET's
    // (the length of the body stripped and coded for this client, Vary, Content-Encoding), which
    // a HEAD's answer should say (RFC 9110 §9.3.2) and whose length it must not contradict
    // (§8.6); the wiki's own HEAD carries no length. Node drops the body it is given for a HEAD.
    { method: request.method === 'HEAD' ? 'GET' : request.method, path: api.target.upstreamPath, headers, body, signal: gone },
    readWhole ? MAX_INSPECT_BYTES : 0,
  );
  const { res } = fetched;
  const { inspected, cookies, json, settling } = afterAnswer(gw, request, api, fetched, headers, wrote(request.method));
  if (settling) await settling;
  await invalidateWrite(gw.changes, request, api, form, res.statusCode, res.headers, json);
  // Relayed, never stored: the policy rewrites its headers for the client only.
  const policy = new AnswerPolicy(
    { status: res.statusCode, headers: res.headers },
    { ...PASSED, requester: api.identity, rule: api.rule, settings: gw.policy, random: gw.random },
  );
  const clientHeaders = policy.responseHeaders();
  // A body the gateway did not decode goes out with the wiki's own encoding.
  const encoding = res.headers['content-encoding'];
  if (!fetched.decoded && encoding !== undefined) clientHeaders['content-encoding'] = encoding;
  return {
    kind: 'answer',
    answer: { status: res.statusCode, headers: clientHeaders, setCookies: cookies.relay, body: inspected.body },
    disposition: 'pass',
    passReason,
    upstreamMs: fetched.upstreamMs,
  };
}
