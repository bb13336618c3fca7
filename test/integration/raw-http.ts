/**
 * Raw HTTP/1.1 over a socket, for requests fetch will not send as-is (a foreign Host header,
 * malformed paths, huge headers). Resolves with the status, headers and body, or status 0 when
 * the server closed the connection without an HTTP answer.
 */
import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  raw: string;
}

export function rawRequest(port: number, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`raw request timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('connect', () => sock.write(request));
    sock.on("data", (c: Buffer) => chunks.push(c));
    sock.on('error', () => {}); // a reset after the answer is fine; 'close' settles
    sock.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(raw);
      if (!m) return resolve({ status: 0, headers: {}, body: '', raw });
      const headEnd = raw.indexOf('\r\n\r\n');
      const headers: Record<string, string> = {};
      for (const line of raw.slice(m[0].length, headEnd).split('\r\n')) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = raw.slice(headEnd + 4);
      if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
      resolve({ status: Number(m[1]), headers, body, raw });
    });
  });
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (let guard = 0; guard < 100_000 && i < s.length; guard++) {
    const nl = s.indexOf('\r\n', i);
    if (nl < 0) break;
    const size = parseInt(s.slice(i, nl), 16);
    if (!Number.isFinite(size) || size === 0) break;
    out += s.slice(nl + 2, nl + 2 + size);
    i = nl + 2 + size + 2;
  }
  return out;
}

/** A GET (or other method) with Connection: close and the given extra header lines. */
export function rawHttp(port: number, method: string, path: string, headers: Record<string, string>, body = ''): Promise<RawResponse> {
  const lines = [`${method} ${path} HTTP/1.1`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (body !== '' || method === 'POST') lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  lines.push('Connection: close');
  return rawRequest(port, lines.join('\r\n') + '\r\n\r\n' + body);
}
