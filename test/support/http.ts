// A small HTTP client for tests: raw header access, any method, body as text.
import { request as nodeRequest } from 'node:http';
import { request } from 'undici';

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export async function http(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string; signal?: AbortSignal } = {},
): Promise<TestResponse> {
  const res = await request(url, {
    method: (opts.method ?? 'GET') as 'GET',
    headers: opts.headers ?? {},
    body: opts.body ?? null,
    ...(opts.signal && { signal: opts.signal }),
  });
  const body = await res.body.text();
  return { status: res.statusCode, headers: res.headers, body };
}

export function header(res: TestResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

export function setCookieNames(res: TestResponse): string[] {
  const v = res.headers['set-cookie'];
  const lines = v === undefined ? [] : Array.isArray(v) ? v : [v];
  return lines.map((l) => l.slice(0, l.indexOf('='))).sort();
}

/** Fields that differ between two identical requests (timestamps, request ids, timings). */
export function withoutVolatile(body: string): string {
  return body
    .replace(/"time":"[^"]*"/g, '"time":"-"')
    .replace(/"wgRequestId":"[^"]*"/g, '"wgRequestId":"-"')
    .replace(/"wgBackendResponseTime":\d+/g, '"wgBackendResponseTime":0')
    .replace(/ time="[^"]*"/g, ' time="-"');
}

/**
 * Send a request target byte for byte (undici and URL objects resolve `/./` and `//` first).
 * Uses node:http, which leaves the path alone.
 */
export function rawTarget(base: string, target: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<TestResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = nodeRequest(
      { host: hostname, port: Number(port), path: target, method: opts.method ?? 'GET', headers: opts.headers ?? {}, agent: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
