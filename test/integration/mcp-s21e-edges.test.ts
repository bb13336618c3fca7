/**
 * Protocol edges MCP clients rely on, on the wire: version negotiation at initialize (an unknown
 * or newer revision gets the newest session revision; an MCP-Protocol-Version header on the
 * initialize neither refuses it nor makes it a stateless request), JSON-RPC ids (string, number;
 * null refused), methods the capabilities do not announce (resources/*, prompts/*) answered
 * "method not found" in both eras, and through the stdio bridge: ping, and notifications/cancelled
 * reaching a built-in tool call running in the extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { SESSION_PROTOCOL_VERSIONS } from '../../server/mcp/session.ts';
import { FakeExtension, hang, startPluginServer } from '../harness/fake-extension.ts';
import type { TestServer } from '../harness/server.ts';
import { MAIN, ROOT, cliEnv } from './cli-support.ts';

setDefaultTimeout(120_000);

let srv: TestServer;
let ext: FakeExtension;

const HEADERS = () => ({ ...srv.auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

async function post(body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; sid: string | null; json: Record<string, unknown> }> {
  const r = await fetch(`${srv.url}/mcp`, { method: 'POST', headers: { ...HEADERS(), ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, sid: r.headers.get('mcp-session-id'), json: text ? JSON.parse(text) : {} };
}

const initialize = (protocolVersion: string, id: string | number = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'edges', version: '1' } },
});

async function session(): Promise<Record<string, string>> {
  const r = await post(initialize(LATEST_PROTOCOL_VERSION));
  const h = { 'mcp-session-id': r.sid!, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
  expect((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, h)).status).toBe(202);
  return h;
}

beforeAll(async () => {
  srv = await startPluginServer({
    plugins: [{ name: 'notes', tools: [{ name: 'count_notes' }] }],
    permissions: { notes: { default: 'auto' } },
    limits: { mcpSessionRate: { max: 1000, windowMs: 60_000 } },
  });
  ext = await FakeExtension.connect(srv.url, srv.secret);
});

afterAll(async () => {
  await ext?.close();
  await srv?.stop();
});

describe('version negotiation at initialize', () => {
  test("the SDK's newest revision is served as asked", async () => {
    const r = await post(initialize(LATEST_PROTOCOL_VERSION));
    expect((r.json.result as { protocolVersion: string }).protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    expect(SESSION_PROTOCOL_VERSIONS[0]).toBe(LATEST_PROTOCOL_VERSION);
  });

  test('an unknown, newer or stateless-era revision in the body gets the newest session revision', async () => {
    for (const asked of ['2099-01-01', '2026-07-28', 'draft', '']) {
      const r = await post(initialize(asked));
      expect(r.status).toBe(200);
      expect(r.sid).toBeString();
      expect((r.json.result as { protocolVersion: string }).protocolVersion).toBe(SESSION_PROTOCOL_VERSIONS[0]!);
    }
  });

  test('an MCP-Protocol-Version header on the initialize (2026-era, future or past) still opens a session', async () => {
    for (const header of ['2026-07-28', '2099-01-01', '1999-01-01']) {
      const r = await post(initialize('2025-06-18'), { 'mcp-protocol-version': header });
      expect(r.status).toBe(200);
      expect(r.sid).toBeString();
      expect((r.json.result as { protocolVersion: string }).protocolVersion).toBe('2025-06-18');
    }
  });

  test('after initialize, every request of the session is checked against the served revisions', async () => {
    const h = await session();
    const bad = await post({ jsonrpc: '2.0', id: 2, method: 'ping' }, { ...h, 'mcp-protocol-version': '2099-01-01' });
    expect(bad.status).toBe(400);
    expect((bad.json.error as { message: string }).message).toContain(SESSION_PROTOCOL_VERSIONS.join(', '));
  });
});

describe('JSON-RPC ids and unannounced methods', () => {
  test('string and number ids come back as sent; a null id is not a request', async () => {
    const h = await session();
    for (const id of ['req-1', 0, 42, 'x'.repeat(200)]) {
      const r = await post({ jsonrpc: '2.0', id, method: 'ping' }, h);
      expect(r.json).toEqual({ jsonrpc: '2.0', id, result: {} });
    }
    const nul = await post({ jsonrpc: '2.0', id: null, method: 'ping' }, h);
    expect(nul.status).toBe(400);
    expect((nul.json.error as { code: number }).code).toBe(-32600);
  });

  test('resources/* and prompts/*, which the capabilities do not announce, are method not found in a session and statelessly', async () => {
    const init = await post(initialize(LATEST_PROTOCOL_VERSION));
    const caps = (init.json.result as { capabilities: Record<string, unknown> }).capabilities;
    expect(Object.keys(caps).sort()).toEqual(['logging', 'tools']);
    const h = await session();
    for (const method of ['resources/list', 'resources/templates/list', 'prompts/list']) {
      const r = await post({ jsonrpc: '2.0', id: 7, method }, h);
      expect(r.json).toMatchObject({ id: 7, error: { code: -32601 } });
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
      const modern = await post({ jsonrpc: '2.0', id: 8, method, params: { _meta: meta } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method });
      expect(modern.status).toBe(404);
      expect(modern.json).toMatchObject({ id: 8, error: { code: -32601 } });
    }
  });
});

describe('through the stdio bridge', () => {
  test('ping is answered, and cancelling a running built-in call reaches the extension', async () => {
    const c = new Client({ name: 'stdio-edges', version: '1.0.0' });
    await c.connect(new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'ignore' }));
    try {
      expect(await c.ping()).toEqual({});
      ext.onDispatch('browser_list_tabs', hang);
      const ac = new AbortController();
      const call = c.callTool({ name: 'browser_list_tabs', arguments: {} }, undefined, { signal: ac.signal });
      const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'browser_list_tabs');
      ac.abort('stopped by the user');
      await expect(call).rejects.toThrow();
      for (let i = 0; i < 1500 && !ext.cancels.some((x) => x.dispatchId === d.params.dispatchId); i++) await Bun.sleep(20);
      expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
    } finally {
      await c.close();
    }
  });
});
