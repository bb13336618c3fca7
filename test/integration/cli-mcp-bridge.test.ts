/**
 * The stdio bridge (`opentabs mcp`) driven by raw stdin writes, the way some clients write:
 * initialize + notifications/initialized + tools/list in ONE write (before the initialize reply);
 * a repeated initialize answered without a second server session; and after the server restarts
 * (same port, same config dir) the bridge re-creates its session by itself. Then the official v2
 * client through the bridge: pinned to 2026-07-28 (each request a stateless POST, no session),
 * 'auto' (server/discover probe) and 'legacy', and cancellation of a stateless call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { FakeExtension, hang } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, removeDir, tempDir } from './cli-support.ts';

setDefaultTimeout(120_000);

type Msg = { jsonrpc: string; id?: number | string; result?: Record<string, unknown>; error?: { message: string }; method?: string };

let root: string;
let srv: TestServer;
let ext: FakeExtension;
let bridge: Subprocess<'pipe', 'pipe', 'pipe'>;
const received: Msg[] = [];
let stderrText = '';

const line = (m: object) => `${JSON.stringify(m)}\n`;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'burst', version: '1' } } };

async function answer(id: number | string, timeoutMs = 60_000): Promise<Msg> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = received.find((r) => r.id === id && (r.result !== undefined || r.error !== undefined));
    if (m) return m;
    await Bun.sleep(20);
  }
  throw new Error(`no answer for id ${id}; stderr:\n${stderrText}`);
}

beforeAll(async () => {
  root = tempDir();
  srv = await startTestServer({ configDir: join(root, 'state'), limits: { adminRate: { max: 1000, windowMs: 60_000 } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  bridge = Bun.spawn([process.execPath, MAIN, 'mcp', '--no-start', '--port', String(srv.port)], {
    cwd: ROOT,
    env: cliEnv(srv.configDir),
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  void (async () => {
    let buf = '';
    const reader = bridge.stdout.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += new TextDecoder().decode(value);
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        const l = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (l) received.push(JSON.parse(l) as Msg);
      }
    }
  })();
  void (async () => {
    const reader = bridge.stderr.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      stderrText += new TextDecoder().decode(value);
    }
  })();
});

afterAll(async () => {
  bridge?.kill('SIGTERM');
  await bridge?.exited;
  await ext?.close().catch(() => {});
  await srv?.stop();
  removeDir(root);
});

describe('stdio bridge under a pipelined burst', () => {
  test('initialize + notifications/initialized + tools/list in one write: all answered, no session errors', async () => {
    bridge.stdin.write(line(INIT) + line({ jsonrpc: '2.0', method: 'notifications/initialized' }) + line({ jsonrpc: '2.0', id: 2, method: 'tools/list' }));
    await bridge.stdin.flush();
    const init = await answer(1);
    expect(init.error).toBeUndefined();
    expect(init.result?.serverInfo).toBeDefined();
    const list = await answer(2);
    expect(list.error).toBeUndefined();
    expect((list.result?.tools as Array<{ name: string }>).some((t) => t.name === 'browser_list_tabs')).toBe(true);
    expect(stderrText).not.toContain('mcp-session-id');
    expect(srv.ctx.mcp.count).toBe(1);
  });

  test('a call right behind it works', async () => {
    const tabs = [{ id: 1, url: 'http://127.0.0.1/', title: 'x', active: true, windowId: 1, groupId: -1, status: 'complete', audible: false }];
    ext.onDispatch('browser_list_tabs', () => ({ value: { tabs } }));
    bridge.stdin.write(line({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'browser_list_tabs', arguments: {} } }));
    await bridge.stdin.flush();
    const r = await answer(3);
    expect((r.result as { structuredContent?: unknown }).structuredContent).toEqual({ tabs });
  });

  test('a repeated initialize is answered from the first: still one server session', async () => {
    bridge.stdin.write(line({ ...INIT, id: 4 }));
    await bridge.stdin.flush();
    const r = await answer(4);
    expect(r.result?.serverInfo).toEqual((await answer(1)).result?.serverInfo);
    expect(srv.ctx.mcp.count).toBe(1);
  });

  test('after a server restart (same port and config dir) the bridge re-creates its session transparently', async () => {
    const { port, configDir } = srv;
    await ext.close().catch(() => {});
    await srv.stop();
    srv = await startTestServer({ configDir, port, limits: { adminRate: { max: 1000, windowMs: 60_000 } } });
    ext = await FakeExtension.connect(srv.url, srv.secret);
    expect(srv.ctx.mcp.count).toBe(0);
    bridge.stdin.write(line({ jsonrpc: '2.0', id: 5, method: 'tools/list' }));
    await bridge.stdin.flush();
    const r = await answer(5);
    expect(r.error).toBeUndefined();
    expect((r.result?.tools as unknown[]).length).toBeGreaterThan(0);
    expect(srv.ctx.mcp.count).toBe(1);
    expect(stderrText).toContain('re-initializing');
  });
});

describe('stdio bridge with the v2 client (@modelcontextprotocol/client)', () => {
  for (const mode of ['pin', 'auto', 'legacy'] as const) {
    test(`${mode} mode: connects through the bridge, lists and calls tools`, async () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--no-start', '--port', String(srv.port)], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'pipe' });
      const versionNegotiation = mode === 'pin' ? { mode: { pin: '2026-07-28' } } : { mode };
      const c = new Client({ name: `v2-stdio-${mode}`, version: '1.0.0' }, { versionNegotiation });
      const sessionsBefore = srv.ctx.mcp.count;
      try {
        await c.connect(transport);
        expect(c.getProtocolEra()).toBe(mode === 'legacy' ? 'legacy' : 'modern');
        expect((await c.listTools()).tools.some((t) => t.name === 'browser_list_tabs')).toBe(true);
        ext.onDispatch('browser_list_tabs', async (_p, api) => {
          api.progress(1, 1, 'one');
          await Bun.sleep(30);
          return { value: { tabs: [] } };
        });
        const seen: number[] = [];
        const r = await c.callTool({ name: 'browser_list_tabs', arguments: {} }, { onprogress: (p) => seen.push(p.progress) });
        expect(r.structuredContent).toEqual({ tabs: [] });
        expect(seen).toEqual([1]);
        // A stateless client opens no server session through the bridge.
        expect(srv.ctx.mcp.count).toBe(sessionsBefore + (mode === 'legacy' ? 1 : 0));
      } finally {
        await c.close().catch(() => {});
      }
    });
  }

  test('pin mode: cancelling a call through the bridge reaches the extension', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--no-start', '--port', String(srv.port)], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'pipe' });
    const c = new Client({ name: 'v2-stdio-cancel', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await c.connect(transport);
      ext.onDispatch('browser_list_tabs', hang);
      const ac = new AbortController();
      const p = c.callTool({ name: 'browser_list_tabs', arguments: {} }, { signal: ac.signal });
      const d = await ext.waitNext((m) => m.method === 'tool.dispatch' && m.params.tool === 'browser_list_tabs');
      ac.abort('stop');
      await expect(p).rejects.toThrow();
      const deadline = Date.now() + 60_000;
      while (!ext.cancels.some((x) => x.dispatchId === d.params.dispatchId) && Date.now() < deadline) await Bun.sleep(20);
      expect(ext.cancels.some((x) => x.dispatchId === d.params.dispatchId)).toBe(true);
    } finally {
      await c.close().catch(() => {});
    }
  });
});
