/**
 * `opentabs mcp`, the stdio bridge, driven by the SDK's stdio client (StdioClientTransport
 * spawning `bun cli/main.ts mcp`): tools/list, tools/call through a fake extension, progress,
 * list_changed and logging notifications forwarded, stdout carrying protocol only, re-initialize
 * after the server drops the session, and auto-start of a background server.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';

// Every test spawns CLI processes on a shared machine: room, not a speed assertion.
setDefaultTimeout(120_000);
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestServer, type TestServer } from '../harness/server.ts';
import { FakeExtension } from '../harness/fake-extension.ts';
import { MAIN, ROOT, cliEnv, killPid, removeDir, runCli, tempDir, waitFor } from './cli-support.ts';

let root: string;
let srv: TestServer;
let ext: FakeExtension;
let client: Client;
const transportErrors: Error[] = [];
let stderrText = '';

beforeAll(async () => {
  root = tempDir();
  srv = await startTestServer({ configDir: join(root, 'state'), limits: { adminRate: { max: 1000, windowMs: 60_000 } } });
  ext = await FakeExtension.connect(srv.url, srv.secret);
  const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp'], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'pipe' });
  transport.stderr?.on('data', (d: Buffer) => (stderrText += d.toString()));
  transport.onerror = (e) => transportErrors.push(e);
  client = new Client({ name: 'cli-mcp-test', version: '1.0.0' });
  await client.connect(transport);
});
afterAll(async () => {
  await client?.close().catch(() => {});
  await ext?.close().catch(() => {});
  await srv?.stop();
  removeDir(root);
});

describe('opentabs mcp (stdio bridge)', () => {
  test('initialize reaches the real server: server info, instructions and capabilities come through', () => {
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getServerVersion()?.name).toBeTruthy();
    expect((client.getInstructions() ?? '').length).toBeGreaterThan(0);
    expect(client.getServerCapabilities()?.logging).toBeDefined();
    expect(srv.ctx.mcp.count).toBe(1);
  });

  test('tools/list and tools/call', async () => {
    const { tools } = await client.listTools();
    expect(tools.some((t) => t.name === 'browser_list_tabs')).toBe(true);
    ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [{ id: 3, url: 'http://127.0.0.1/', title: 'T', active: true, windowId: 1, groupId: -1, status: 'complete', audible: false }] } }));
    const r = (await client.callTool({ name: 'browser_list_tabs', arguments: {} })) as { isError?: boolean; structuredContent?: unknown };
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ tabs: [{ id: 3, url: 'http://127.0.0.1/', title: 'T', active: true, windowId: 1, groupId: -1, status: 'complete', audible: false }] });
  });

  test('progress notifications reach the stdio client', async () => {
    // Gaps between progress and result: the test is about forwarding, not about the server's
    // ordering of a notification sent in the same instant as the result.
    ext.onDispatch('browser_list_tabs', async (_p, api) => {
      api.progress(1, 2, 'half way');
      await Bun.sleep(100);
      api.progress(2, 2, 'done');
      await Bun.sleep(100);
      return { value: { tabs: [] } };
    });
    const seen: Array<{ progress: number; message?: string }> = [];
    await client.callTool({ name: 'browser_list_tabs', arguments: {} }, undefined, { onprogress: (p) => seen.push(p) });
    expect(seen.map((p) => p.progress)).toEqual([1, 2]);
    expect(seen[0].message).toBe('half way');
    expect(seen[1].message).toBe('done');
  });

  test('notifications/tools/list_changed and logging messages are forwarded', async () => {
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    const logs: Array<{ logger?: string; data: unknown }> = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    await client.setLoggingLevel('debug');
    // A permission change through the CLI reloads the server, which rebuilds the catalog.
    const set = await runCli(['config', 'set', 'permission.browser_open_tab', 'off'], { configDir: srv.configDir });
    expect(set.code).toBe(0);
    await waitFor(() => changed > 0, 15_000, 'tools/list_changed');
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === 'browser_open_tab')?.description?.startsWith('[Disabled]')).toBe(true);
    ext.notify('plugin.log', { entries: [{ plugin: 'demo', level: 'warning', message: 'hello from the page', ts: Date.now() }] });
    await waitFor(() => logs.length > 0, 15_000, 'notifications/message');
    expect(logs[0]).toMatchObject({ logger: 'demo', data: 'hello from the page' });
  });

  test('after the server drops the session, the bridge re-initializes and the next call works', async () => {
    await srv.ctx.mcp.closeAll();
    expect(srv.ctx.mcp.count).toBe(0);
    ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
    const r = (await client.callTool({ name: 'browser_list_tabs', arguments: {} })) as { isError?: boolean };
    expect(r.isError).toBeFalsy();
    expect(srv.ctx.mcp.count).toBe(1);
    expect(stderrText).toContain('re-initializing');
  });

  test('stdout carried nothing but protocol; logs went to stderr', () => {
    // A stray line on stdout would have failed JSON-RPC parsing in the client transport.
    expect(transportErrors.map((e) => e.message)).toEqual([]);
    expect(stderrText).toContain('[opentabs mcp] bridging stdio');
  });
});

describe('opentabs mcp --gateway', () => {
  test('bridges to /mcp/gateway: exactly the two meta-tools, and opentabs_call works', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--gateway'], env: cliEnv(srv.configDir), cwd: ROOT, stderr: 'pipe' });
    const c = new Client({ name: 'gw', version: '1.0.0' });
    try {
      await c.connect(transport);
      const { tools } = await c.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['opentabs_call', 'opentabs_list_tools']);
      ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
      const r = (await c.callTool({ name: 'opentabs_call', arguments: { tool: 'browser_list_tabs', arguments: {} } })) as { isError?: boolean; structuredContent?: unknown };
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual({ tabs: [] });
    } finally {
      await c.close().catch(() => {});
    }
  });
});

describe('opentabs mcp auto-start', () => {
  test('starts a background server when none runs, then bridges to it', async () => {
    const cfg = join(root, 'auto');
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const port = probe.port!;
    probe.stop(true);
    const transport = new StdioClientTransport({ command: process.execPath, args: [MAIN, 'mcp', '--port', String(port)], env: cliEnv(cfg), cwd: ROOT, stderr: 'pipe' });
    let err = '';
    transport.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    const c = new Client({ name: 'auto', version: '1.0.0' });
    let pid = 0;
    try {
      await c.connect(transport);
      pid = JSON.parse(readFileSync(join(cfg, 'server.pid'), 'utf8')).pid;
      const { tools } = await c.listTools();
      expect(tools.length).toBeGreaterThan(0);
      // One line about the start; the child's config block (secret included) stays out of the client's log.
      const startLines = err.split('\n').filter((l) => l.includes('started the OpenTabs server'));
      expect(startLines.length).toBe(1);
      expect(startLines[0]).toContain(join(cfg, 'server.log'));
      expect(err).not.toContain('Connect your AI client');
      const secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret as string;
      expect(secret.length).toBeGreaterThan(0);
      expect(err).not.toContain(secret);
      const h = await fetch(`http://127.0.0.1:${port}/health`);
      expect(h.status).toBe(200);
    } finally {
      await c.close().catch(() => {});
      if (pid) await killPid(pid);
    }
  }, 120_000);

  test('--no-start fails clearly when nothing runs', async () => {
    const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') });
    const port = probe.port!;
    probe.stop(true);
    const r = await runCli(['mcp', '--no-start', '--port', String(port)], { configDir: join(root, 'nostart') });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('not running');
  });
});
