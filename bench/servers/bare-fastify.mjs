// The baseline: a bare Fastify route answering the same bytes from memory, logger off.
import Fastify from 'fastify';
import { body, headers } from './api-answer.mjs';

const port = Number(process.argv[2] ?? 9102);
const app = Fastify({ logger: false });
app.get('/w/api.php', (_req, reply) => reply.headers(headers).send(body));
await app.listen({ host: '127.0.0.1', port });
