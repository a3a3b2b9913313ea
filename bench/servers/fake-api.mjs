// A stand-in wiki for the hit-path benchmark: a fixed ~300-byte api.php answer that MediaWiki
// would mark public (so every cache under test keeps it).
import { createServer } from 'node:http';
import { body, headers } from './api-answer.mjs';

const port = Number(process.argv[2] ?? 9101);
const withLength = { ...headers, 'content-length': String(body.length) };
const server = createServer((_req, res) => {
  res.writeHead(200, withLength);
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
