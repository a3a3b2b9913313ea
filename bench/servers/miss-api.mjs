// The stand-in wiki of the miss-throughput section (bench/miss-throughput.mjs): every api.php
// request answered at once with the same 2,127-byte JSON answer (the siteinfo answer of
// test/fixtures/debuginfo/capture-61-siteinfo-fv1.json without its debuginfo, padded with the
// names of the files that capture's debuginfo lists to the size of the siteinfo answer measured in
// docs/BENCHMARKS.md "Compression"), whatever its query, so that every new URL is a miss of the
// same cost. The headers are MediaWiki 1.39's (captures 06 and 51): an anonymous requester gets
// the public answer every cache stores; a requester with a session cookie (`wiki_session`, not
// empty, not `deleted`) gets it `private`, as ApiMain::sendCacheHeaders sends it to a logged-in
// user, which nginx and Varnish pass and the gateway keeps in that session's tier only.
//   node bench/servers/miss-api.mjs PORT
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ANSWER_BYTES = 2127;

/** The answer: JSON, exactly ANSWER_BYTES long. */
export function missAnswer() {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const capture = JSON.parse(readFileSync(path.join(here, '../../test/fixtures/debuginfo/capture-61-siteinfo-fv1.json'), 'utf8'));
  const names = capture.debuginfo.includes.map((i) => i.name).join(' ');
  const answer = { batchcomplete: capture.batchcomplete, query: capture.query, _pad: '' };
  const bare = Buffer.byteLength(JSON.stringify(answer));
  answer._pad = names.slice(0, ANSWER_BYTES - bare);
  const body = Buffer.from(JSON.stringify(answer));
  if (body.length !== ANSWER_BYTES) throw new Error(`answer is ${body.length} bytes`);
  return body;
}

const COMMON = {
  'x-content-type-options': 'nosniff',
  'content-type': 'application/json; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
};
/** The headers of the public answer (an anonymous requester) and of the private one (a session). */
export const PUBLIC = { ...COMMON, expires: 'Thu, 01 Jan 1970 00:00:01 GMT', 'cache-control': 's-maxage=3600, max-age=0, public' };
export const PRIVATE = { ...COMMON, 'cache-control': 'private, must-revalidate, max-age=0' };

/** A session MediaWiki would load: a non-empty `wiki_session` other than PHP's `deleted`. */
export const hasSession = (cookie) => {
  const m = /(?:^|;\s*)wiki_session=([^;]*)/.exec(cookie ?? '');
  return m !== null && m[1] !== '' && m[1] !== 'deleted';
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const body = missAnswer();
  const publicHeaders = { ...PUBLIC, 'content-length': String(body.length) };
  const privateHeaders = { ...PRIVATE, 'content-length': String(body.length) };
  const server = createServer((req, res) => {
    res.writeHead(200, hasSession(req.headers.cookie) ? privateHeaders : publicHeaders);
    res.end(body);
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.argv[2] ?? 9104), '127.0.0.1');
}
