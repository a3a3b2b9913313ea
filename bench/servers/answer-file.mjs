// A stand-in wiki for the compression bench's hits: one real api.php answer, read from a file,
// with the headers MediaWiki sends for a public answer (so the gateway keeps it).
//   node bench/servers/answer-file.mjs PORT FILE
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { headers } from './api-answer.mjs';

const [port = '9102', file] = process.argv.slice(2);
const body = readFileSync(file);
const withLength = { ...headers, 'content-length': String(body.length) };
const server = createServer((_req, res) => {
  res.writeHead(200, withLength);
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1');
