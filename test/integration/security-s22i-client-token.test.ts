/**
 * MCP client configs (~/.claude.json, a project's .mcp.json or .cursor/mcp.json, opencode.json,
 * Codex's variable) hold the client token of <config dir>/client-token.json, not the secret of
 * extension/auth.json. An agent that reads its client's config and can send HTTP requests gets
 * what its client gets (MCP, tool calls, the read-only routes) and nothing the user keeps: it
 * cannot answer its own waiting call, open the extension's /ws (either form), change a plugin's
 * settings or reload. The secret keeps working everywhere.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:net';
import { FakeExtension, connectMcp, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { CLIENT_NONCE_HEADER, extensionProofMessage, hmacHex, hmacSubprotocol, randomHex, type WsInfoHandshake } from '../../server/protocol/handshake.ts';
import { MAIN } from './cli-support.ts';

setDefaultTimeout(60_000);

let srv: TestServer;
let ext: FakeExtension;

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'save' }, { name: 'read' }], configSchema: { baseUrl: { type: 'url', label: 'Base URL' } } }],
    permissions: { notes: { default: 'ask', tools: { read: 'auto' } } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  ext.onDispatch('notes_save', async () => ({ value: { saved: true } }));
  ext.onDispatch('notes_read', async () => ({ value: { text: 'hello' } }));
});
afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

const json = { 'content-type': 'application/json' };
type ErrorBody = { error: { code: string; message: string } };

async function waitingId(): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const list = (await (await fetch(`${srv.url}/approvals`, { headers: srv.client })).json()) as { approvals: { id: string }[] };
    if (list.approvals.length > 0) return list.approvals[0]!.id;
    await Bun.sleep(10);
  }
  throw new Error('no call waited for approval');
}

async function expectRefused(r: Response): Promise<void> {
  expect(r.status).toBe(403);
  const body = (await r.json()) as ErrorBody;
  expect(body.error.code).toBe('client_token_not_allowed');
  expect(body.error.message).toContain(join(srv.configDir, 'extension', 'auth.json'));
  expect(body.error.message).not.toContain(srv.secret);
  expect(body.error.message).not.toContain(srv.clientToken);
}

/** The upgrade request a browser sends, raw, so the refusal's status and body are visible. */
function rawUpgrade(protocols: string): Promise<{ status: number; body: string }> {
  const req = [
    'GET /ws HTTP/1.1',
    `Host: 127.0.0.1:${srv.port}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    'Sec-WebSocket-Version: 13',
    `Sec-WebSocket-Key: ${Buffer.from(randomHex(8)).toString('base64')}`,
    `Sec-WebSocket-Protocol: ${protocols}`,
    '',
    '',
  ].join('\r\n');
  return new Promise((resolve, reject) => {
    const sock = connect(srv.port, '127.0.0.1');
    let raw = '';
    const timer = setTimeout(() => (sock.destroy(), reject(new Error(`no answer to the upgrade; got ${JSON.stringify(raw)}`))), 10_000);
    const done = (v: { status: number; body: string }) => (clearTimeout(timer), sock.destroy(), resolve(v));
    sock.on('connect', () => sock.write(req));
    sock.on('error', (e) => (clearTimeout(timer), reject(e)));
    sock.on('data', (d: Buffer) => {
      raw += d.toString('utf8');
      const headEnd = raw.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(raw.slice(0, headEnd))?.[1] ?? 0);
      const body = raw.slice(headEnd + 4);
      if (status === 101 || Buffer.byteLength(body) >= length) done({ status, body });
    });
  });
}

test('the client token is its own file, mode 0600, outside the extension folder; auth.json keeps its format', () => {
  const file = JSON.parse(readFileSync(join(srv.configDir, 'client-token.json'), 'utf8')) as { clientToken: string };
  expect(file).toEqual({ clientToken: srv.clientToken });
  expect(srv.clientToken).toMatch(/^[0-9a-f]{64}$/);
  expect(srv.clientToken).not.toBe(srv.secret);
  if (process.platform !== 'win32') expect(statSync(join(srv.configDir, 'client-token.json')).mode & 0o777).toBe(0o600);
  expect(JSON.parse(readFileSync(join(srv.configDir, 'extension', 'auth.json'), 'utf8'))).toEqual({ secret: srv.secret });
});

test('with the client token an agent cannot answer its own waiting call; the secret can', async () => {
  const call = fetch(`${srv.url}/tools/notes_save/call`, { method: 'POST', headers: { ...srv.client, ...json }, body: JSON.stringify({ arguments: {} }) });
  const id = await waitingId();

  await expectRefused(await fetch(`${srv.url}/approvals/${id}`, { method: 'POST', headers: { ...srv.client, ...json }, body: JSON.stringify({ decision: 'allow' }) }));
  // Still waiting.
  expect((await fetch(`${srv.url}/approvals/${id}`, { headers: srv.client })).status).toBe(200);
  expect(srv.ctx.hub.confirmations.list().map((a) => a.id)).toContain(id);

  // The user (Bearer <secret>, what the CLI sends) allows it.
  const allowed = await fetch(`${srv.url}/approvals/${id}`, { method: 'POST', headers: { ...srv.auth, ...json }, body: JSON.stringify({ decision: 'allow' }) });
  expect(allowed.status).toBe(200);
  expect((await call).status).toBe(200);
});

test('with the client token an agent cannot open /ws with the token as subprotocol', async () => {
  const r = await rawUpgrade(`opentabs, ${srv.clientToken}`);
  expect(r.status).toBe(403);
  expect((JSON.parse(r.body) as ErrorBody).error.code).toBe('client_token_not_allowed');
  expect(srv.ctx.hub.connected).toBe(true);
});

test('with the client token an agent cannot open /ws with the handshake', async () => {
  const info = (await (await fetch(`${srv.url}/ws-info`, { headers: { [CLIENT_NONCE_HEADER]: randomHex(16) } })).json()) as WsInfoHandshake;
  const proof = await hmacHex(srv.clientToken, extensionProofMessage(info.serverNonce));
  const r = await rawUpgrade(`opentabs, ${hmacSubprotocol(info.serverNonce, proof)}`);
  expect(r.status).toBe(403);
  expect((JSON.parse(r.body) as ErrorBody).error.code).toBe('client_token_not_allowed');
  // The bearer form of /ws-info is the user's too.
  await expectRefused(await fetch(`${srv.url}/ws-info`, { headers: srv.client }));
});

test('with the client token an agent cannot change settings or reload; the secret can', async () => {
  await expectRefused(await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.client, ...json }, body: JSON.stringify({ plugin: 'notes', settings: { baseUrl: 'https://attacker.example/' } }) }));
  expect(readFileSync(join(srv.configDir, 'config.json'), 'utf8')).not.toContain('attacker.example');
  await expectRefused(await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.client }));
  await expectRefused(await fetch(`${srv.url}/extension/reload`, { method: 'POST', headers: srv.client }));

  const settings = await fetch(`${srv.url}/plugin-settings`, { method: 'POST', headers: { ...srv.auth, ...json }, body: JSON.stringify({ plugin: 'notes', settings: { baseUrl: 'https://notes.example/' } }) });
  expect(settings.status).toBe(200);
  expect(readFileSync(join(srv.configDir, 'config.json'), 'utf8')).toContain('notes.example');
  expect((await fetch(`${srv.url}/ws-info`, { headers: srv.auth })).status).toBe(200);
});

test('the client token reaches MCP over the SDK client, REST tool calls and the read-only routes', async () => {
  for (const path of ['/mcp', '/mcp/gateway'] as const) {
    const client = await connectMcp(srv.url, srv.clientToken, path);
    try {
      const tools = await client.listTools();
      expect(tools.tools.length).toBeGreaterThan(0);
      if (path === '/mcp') {
        const result = await client.callTool({ name: 'notes_read', arguments: {} });
        expect(JSON.stringify(result.content)).toContain('hello');
      }
    } finally {
      await client.close();
    }
  }
  const rest = await fetch(`${srv.url}/tools/notes_read/call`, { method: 'POST', headers: { ...srv.client, ...json }, body: JSON.stringify({ arguments: {} }) });
  expect(rest.status).toBe(200);
  const streamed = await fetch(`${srv.url}/tools/notes_read/call`, { method: 'POST', headers: { ...srv.client, ...json, accept: 'application/x-ndjson' }, body: JSON.stringify({ arguments: {} }) });
  expect(streamed.status).toBe(200);
  expect(await streamed.text()).toContain('hello');
  for (const path of ['/tools', '/audit', '/approvals', '/plugins/notes/logs', '/health']) {
    const r = await fetch(`${srv.url}${path}`, { headers: srv.client });
    expect({ path, status: r.status }).toEqual({ path, status: 200 });
  }
  expect(Object.keys((await (await fetch(`${srv.url}/health`, { headers: srv.client })).json()) as object).length).toBeGreaterThan(1);
  const legacy = await fetch(`${srv.url}/sse`, { headers: srv.client });
  expect(legacy.status).toBe(200);
  await legacy.body?.cancel();
});

test('nothing the server sends the extension (which pages may reach) carries the client token', () => {
  expect(ext.messages.length).toBeGreaterThan(0);
  expect(JSON.stringify(ext.messages)).not.toContain(srv.clientToken);
  expect(JSON.stringify(ext.messages)).not.toContain(srv.secret);
});

test('opentabs approve and deny, run by the user, still answer', async () => {
  const call = fetch(`${srv.url}/tools/notes_save/call`, { method: 'POST', headers: { ...srv.client, ...json }, body: JSON.stringify({ arguments: {} }) });
  const id = await waitingId();
  const p = Bun.spawn([process.execPath, MAIN, 'deny', id, '--port', String(srv.port)], {
    env: { ...process.env, OPENTABS_CONFIG_DIR: srv.configDir, NO_COLOR: '1' },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [code, stderr] = await Promise.all([p.exited, new Response(p.stderr).text()]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  expect((await call).status).not.toBe(200);
});

test('rotate-secret makes a new client token: the old one no longer answers', async () => {
  const { rotateSecret } = await import('../../server/state/secret.ts');
  const oldToken = srv.clientToken;
  const newSecret = await rotateSecret(srv.configDir);
  expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: srv.auth })).status).toBe(200);
  const newToken = (JSON.parse(readFileSync(join(srv.configDir, 'client-token.json'), 'utf8')) as { clientToken: string }).clientToken;
  expect(newToken).not.toBe(oldToken);
  expect(newToken).not.toBe(newSecret);
  expect((await fetch(`${srv.url}/tools`, { headers: { Authorization: `Bearer ${oldToken}` } })).status).toBe(401);
  expect((await fetch(`${srv.url}/tools`, { headers: { Authorization: `Bearer ${newToken}` } })).status).toBe(200);
  expect((await fetch(`${srv.url}/reload`, { method: 'POST', headers: { Authorization: `Bearer ${newToken}` } })).status).toBe(403);
});
