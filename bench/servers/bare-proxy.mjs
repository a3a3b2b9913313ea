// The floor any Node gateway stands on, for the miss path (bench/miss-throughput.mjs) as the bare
// Fastify route is for the hit path: node:http in front of the wiki through one undici Pool with
// the gateway's own options (src/upstream/upstream.ts, connections and timeouts at their defaults
// in src/config/fields.ts), every request forwarded, its answer read whole (the gateway reads a
// miss whole: it stores it) and written back with its status and headers. No cache, no key, no
// policy, no parsing, no compression; hop-by-hop headers and those named in Connection are not
// carried across (RFC 9110 §7.6.1), Host is the wiki's own (undici derives it from the origin).
//   node bench/servers/bare-proxy.mjs PORT UPSTREAM_ORIGIN
import { createServer } from 'node:http';
import { Pool } from 'undici';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

const [port = '9105', upstream = 'http://127.0.0.1:9104'] = process.argv.slice(2);
const pool = new Pool(upstream, {
  connections: 64, // WIKIEDGE_UPSTREAM_CONNECTIONS
  connect: { timeout: 5_000 }, // WIKIEDGE_UPSTREAM_CONNECT_TIMEOUT_MS
  headersTimeout: 30_000, // WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS
  bodyTimeout: 30_000,
  keepAliveTimeout: 4_000,
});

/** `headers` without hop-by-hop ones and those their Connection names. */
function endToEnd(headers) {
  const listed = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter(Boolean),
  );
  const out = {};
  for (const name in headers) if (!HOP_BY_HOP.has(name) && !listed.has(name) && headers[name] !== undefined) out[name] = headers[name];
  return out;
}

const server = createServer(async (req, res) => {
  try {
    const body = req.method === 'GET' || req.method === 'HEAD' ? null : req;
    const answer = await pool.request({ method: req.method, path: req.url, headers: endToEnd(req.headers), body });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    const headers = endToEnd(answer.headers);
    if (req.method !== 'HEAD') headers['content-length'] = String(bytes.length);
    res.writeHead(answer.statusCode, headers);
    res.end(bytes);
  } catch {
    if (!res.headersSent) res.writeHead(502);
    res.end();
  }
});
server.keepAliveTimeout = 65_000;
server.listen(Number(port), '127.0.0.1');
// SIGTERM ends it through exit(), so that `node --cpu-prof` writes its profile (the bench profiles it beside the gateway).
process.on('SIGTERM', () => process.exit(0));
