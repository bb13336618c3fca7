/**
 * An agent with the client token opens many requests that declare (or stream) a large body, send
 * part of it and stall. The bytes of bodies being read are capped over all connections: the server
 * (its own process, so its memory can be read) stays within the cap, a request past it gets 503
 * body_budget_full with Retry-After, a request with the secret still gets through, and after the
 * idle time the stalled bodies get 408 request_body_timeout and their bytes are given back.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { makeTempConfigDir, removeDir } from '../harness/server.ts';

// Many connections and megabytes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);

const MB = 1024 * 1024;
const LIMITS = { bodyBytesInFlightMax: 24 * MB, userBodyBytesReserve: 8 * MB, bodyIdleTimeoutMs: 3_000 };
/** Requests that each declare 10 MB and send 8 MB of it, then stall. */
const FLOOD = 24;
const DECLARED = 10 * MB;
const SENT = 8 * MB;

const dir = makeTempConfigDir();
let child: ReturnType<typeof Bun.spawn>;
let port = 0;
let secret = '';
let clientToken = '';
const sockets: Socket[] = [];

beforeAll(async () => {
  const script = join(dir, 'serve.ts');
  writeFileSync(
    script,
    `const { startServer } = await import(${JSON.stringify(join(import.meta.dir, '../../server/serve.ts'))});
const s = await startServer({ port: 0, configDir: ${JSON.stringify(join(dir, 'config'))}, installExtension: false, quiet: true, limits: ${JSON.stringify(LIMITS)} });
await s.ready;
console.log(JSON.stringify({ port: s.port, secret: s.ctx.secret, clientToken: s.ctx.clientToken }));
`,
  );
  child = Bun.spawn([process.execPath, script], { stdout: 'pipe', stderr: 'inherit' });
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let out = '';
  for (let i = 0; i < 1000 && !out.includes('\n'); i++) {
    const { done, value } = await reader.read();
    if (done) break;
    out += new TextDecoder().decode(value);
  }
  ({ port, secret, clientToken } = JSON.parse(out.trim()));
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  child?.kill();
  await child?.exited;
  removeDir(dir);
});

function rssMb(): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return Number(m![1]) / 1024;
}

/**
 * A connection that sends the head of a POST and `body` bytes of it. `answer` resolves with what
 * came back once a whole answer has (or the connection closed); `sent` once the bytes were taken or an answer came;
 * `received()` is what came back so far.
 */
function partialPost(
  token: string,
  head: Record<string, string>,
  body: Buffer,
  path = '/tools/nope/call',
): { sock: Socket; flushed: Promise<void>; answer: Promise<string>; sent: Promise<unknown>; received: () => string } {
  const sock = connect(port, '127.0.0.1');
  sockets.push(sock);
  sock.on('error', () => {});
  let text = '';
  const answer = new Promise<string>((resolve) => {
    sock.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // The whole answer: its head, and as many bytes of body as its Content-Length says.
      const headEnd = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, headEnd));
      if (headEnd >= 0 && length && text.length - headEnd - 4 >= Number(length[1])) resolve(text);
    });
    sock.on('close', () => resolve(text));
  });
  const lines = [`POST ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`, 'Content-Type: application/json', ...Object.entries(head).map(([k, v]) => `${k}: ${v}`)];
  sock.write(`${lines.join('\r\n')}\r\n\r\n`);
  const flushed = new Promise<void>((resolve) => sock.write(body, () => resolve()));
  return { sock, flushed, answer, sent: Promise.race([flushed, answer]), received: () => text };
}

const status = (raw: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string): string => raw.slice(raw.indexOf('\r\n\r\n') + 4);

function call(token: string, bytes: number): Promise<Response> {
  const body = JSON.stringify({ arguments: { pad: 'x'.repeat(bytes) } });
  return fetch(`http://127.0.0.1:${port}/tools/nope/call`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
}

test('stalled bodies hold at most the cap; past it 503, the secret still gets through, the stalled ones end with 408', async () => {
  const before = rssMb();
  // Two declared bodies (20 MB of the 24) and one chunked body of 3 MB fit; each sends part and stalls.
  const filler = Buffer.alloc(SENT, 120);
  const held = [partialPost(clientToken, { 'Content-Length': String(DECLARED) }, filler), partialPost(clientToken, { 'Content-Length': String(DECLARED) }, filler)];
  await Promise.all(held.map((h) => h.flushed));
  const chunk = Buffer.alloc(3 * MB, 120);
  const chunked = partialPost(clientToken, { 'Transfer-Encoding': 'chunked' }, Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]));
  await chunked.flushed;

  const flood = Array.from({ length: FLOOD }, () => partialPost(clientToken, { 'Content-Length': String(DECLARED) }, filler));
  await Promise.all(flood.map((f) => f.sent));
  let peak = 0;
  for (let i = 0; i < 10; i++) {
    peak = Math.max(peak, rssMb());
    await Bun.sleep(50);
  }
  // The flood sent 24 × 8 MB (192 MB); the server holds the cap's worth, not that.
  expect(Math.round(peak - before)).toBeLessThan(24 + 60);
  // Every one past the cap was refused at once with a JSON 503 that says when to retry.
  for (const raw of flood.map((f) => f.received())) {
    expect(status(raw)).toBe(503);
    expect(raw.toLowerCase()).toContain('retry-after: 5');
    const err = JSON.parse(bodyOf(raw)).error;
    expect(err.code).toBe('body_budget_full');
    expect(err.message).toContain('24 MB at once');
  }

  // A new request past the cap (5 MB more than the 20 declared), with a complete body: 503. The
  // same with the secret: read (from the user's reserve) and answered.
  const refused = await call(clientToken, 5 * MB);
  expect(refused.status).toBe(503);
  expect(refused.headers.get('retry-after')).toBe('5');
  expect((await refused.json()).error.code).toBe('body_budget_full');
  const user = await call(secret, 5 * MB);
  expect(user.status).toBe(404);
  expect((await user.json()).error.code).toBe('unknown_tool');
  const health = await fetch(`http://127.0.0.1:${port}/health`);
  expect(health.status).toBe(200);
  await health.text();

  // After the idle time the stalled bodies are ended with a clear 408.
  for (const raw of await Promise.all([...held.map((h) => h.answer), chunked.answer])) {
    expect(status(raw)).toBe(408);
    const err = JSON.parse(bodyOf(raw)).error;
    expect(err.code).toBe('request_body_timeout');
    expect(err.message).toContain('stopped arriving');
  }
  // Their bytes were given back: the client token's calls are read again.
  const again = await call(clientToken, 2 * MB);
  expect(again.status).toBe(404);
  expect((await again.json()).error.code).toBe('unknown_tool');
});
