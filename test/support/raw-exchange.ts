// One request on its own connection, written byte for byte and read to the end: what a client's
// socket sends and receives, with nothing normalising either way (undici and node:http resolve
// targets and merge headers). Shared by the tests that compare answers line by line.
import { connect } from 'node:net';

export interface RawResponse {
  readonly statusLine: string;
  /** Header lines as sent, lower-cased names, sorted (order carries no meaning across names). */
  readonly headers: string[];
  readonly body: Buffer;
}

export function exchange(base: string, method: string, target: string, extra: Record<string, string> = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  const lines = [`${method} ${target} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [k, v] of Object.entries(extra)) lines.push(`${k}: ${v}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const [statusLine, ...headerLines] = all.subarray(0, split).toString('latin1').split('\r\n');
      resolve({
        statusLine: statusLine!,
        headers: headerLines.map((l) => l.replace(/^[^:]+/, (n) => n.toLowerCase())).sort(),
        body: all.subarray(split + 4),
      });
    });
  });
}

/** Header lines that differ between any two responses: the clock and the request id. */
export const stableHeaders = (r: RawResponse) => r.headers.filter((l) => !/^(date|x-request-id): /.test(l));

export const headerOf = (r: RawResponse, name: string) => r.headers.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
