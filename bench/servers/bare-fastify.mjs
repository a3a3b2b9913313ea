// The baseline: a bare Fastify route answering the same bytes from memory, logger off.
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 9102);
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
};
const app = Fastify({ logger: false });
app.get('/w/api.php', (_req, reply) => reply.headers(headers).send(body));
await app.listen({ host: '127.0.0.1', port });
