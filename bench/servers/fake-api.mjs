// A stand-in wiki for the hit-path benchmark: a fixed ~300-byte api.php answer that MediaWiki
// would mark public (so every cache under test keeps it).
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 9101);
const body = Buffer.from(
  JSON.stringify({ batchcomplete: '', query: { filearchive: [] }, _pad: 'x'.repeat(220) }),
);
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 's-maxage=3600, max-age=3600, public',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
  'content-length': String(body.length),
};
const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1');
