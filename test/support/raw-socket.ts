// Bytes a well-behaved HTTP client would refuse to send (conflicting framing, Connection-listed
// headers, smuggled requests), written to one socket as they are; everything the server sends
// back until it closes, as latin1 text.
import { connect } from 'node:net';

export function rawBytes(base: string, bytes: string, timeoutMs = 3_000): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    // write, not end: a half-closed socket makes Node's server drop the request.
    const socket = connect(Number(port), hostname, () => socket.write(bytes, 'latin1'));
    let data = '';
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
  });
}
