/**
 * A scripted stand-in for the Chrome extension over a real WebSocket to /ws. It authenticates
 * with the `opentabs, <secret>` subprotocol, records everything the server sends, answers
 * tool.dispatch with per-tool handlers (default: echo), and can send progress, logs,
 * confirmation responses and any raw frame.
 *
 *   const ext = await FakeExtension.connect(srv.url, srv.secret);
 *   ext.onDispatch('browser_list_tabs', () => ({ value: { tabs: [] } }));
 *   ...
 *   await ext.close();
 */
import type { DispatchResult, LogEntry, ServerParams } from '../../server/protocol/methods.ts';

export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: any;
  result?: any;
  error?: { code: number; message: string; data?: any };
}

export type DispatchParams = ServerParams<'tool.dispatch'>;

export interface DispatchApi {
  dispatchId: string;
  progress(progress: number, total?: number, message?: string): void;
  log(level: LogEntry['level'], message: string, data?: unknown): void;
  /** Resolves when the server sends tool.cancel for this dispatch. */
  cancelled: Promise<string>;
}

/** Throw from a handler to answer with a JSON-RPC error carrying `data.code`. */
export class FakeToolError extends Error {
  constructor(
    public code: string,
    message: string,
    public data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export type DispatchHandler = (params: DispatchParams, api: DispatchApi) => DispatchResult | Promise<DispatchResult>;

/** Never resolves: a handler that hangs until cancelled. */
export const hang: DispatchHandler = (_p, api) => api.cancelled.then(() => new Promise<never>(() => {}));

export class FakeExtension {
  readonly messages: RpcMessage[] = [];
  readonly cancels: { dispatchId: string; reason: string }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private handlers = new Map<string, DispatchHandler>();
  private cancelWaiters = new Map<string, (reason: string) => void>();
  private waiters: { match: (m: RpcMessage) => boolean; resolve: (m: RpcMessage) => void }[] = [];
  private pending = new Map<number, { resolve: (m: RpcMessage) => void }>();
  private nextId = 1;
  /** Dispatches answered with an error instead of the default echo when no handler is set. */
  defaultHandler: DispatchHandler = (p) => ({ value: { echo: p.input, tool: p.tool, plugin: p.plugin, tabId: p.tabId ?? null } });
  /** When false, tool.dispatch requests are recorded but never answered. */
  autoAnswer = true;
  /** What tab.page answers for these tabs (a URL, or null: no such tab); other tabs get Method not found. */
  readonly tabPages = new Map<number, string | null>();

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => {
      ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason }));
    });
    ws.addEventListener('message', (e) => this.onMessage(String(e.data)));
  }

  /** Connect and wait for the server's sync.full. Rejects when the server refuses the socket. */
  static async connect(httpUrl: string, secret: string, opts: { protocols?: string[]; timeoutMs?: number; pluginTabs?: boolean } = {}): Promise<FakeExtension> {
    const url = httpUrl.replace(/^http/, 'ws') + '/ws';
    const ws = new WebSocket(url, opts.protocols ?? ['opentabs', secret]);
    const ext = new FakeExtension(ws);
    const synced = ext.waitFor('sync.full', undefined, opts.timeoutMs ?? 5000);
    // A refused connection must not leave this wait to reject later as an unhandled error.
    synced.catch(() => {});
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('WebSocket open timed out')), opts.timeoutMs ?? 5000);
      ws.addEventListener('open', () => (clearTimeout(timer), resolve()), { once: true });
      ws.addEventListener('error', () => (clearTimeout(timer), reject(new Error('WebSocket connection refused'))), { once: true });
      ws.addEventListener('close', (e) => (clearTimeout(timer), reject(new Error(`WebSocket closed before open (${e.code})`))), { once: true });
    });
    const full = (await synced) as { plugins?: { name: string; urlPatterns: string[] }[] };
    // Like a user with each plugin's app open: one ready tab per plugin (a plugin call that names no
    // tab is asked about and runs in a tab of its plugin; with none open it is refused unasked).
    if (opts.pluginTabs !== false) await ext.openPluginTabs((full.plugins ?? []).map((p) => p.name));
    return ext;
  }

  /** Report one ready tab for each of these plugins (ids from 9001), as the extension does when their pages load. */
  async openPluginTabs(plugins: string[]): Promise<void> {
    for (const [i, plugin] of plugins.entries()) {
      const tabId = 9001 + i;
      const url = `https://${plugin}.example/`;
      this.tabPages.set(tabId, url);
      await this.request('tab.stateChanged', { plugin, state: 'ready', tabs: [{ tabId, url, title: plugin, ready: true }] });
    }
  }

  get protocol(): string {
    return this.ws.protocol;
  }

  onDispatch(tool: string, handler: DispatchHandler): this {
    this.handlers.set(tool, handler);
    return this;
  }

  /** Notifications/requests the server sent with this method. */
  sent(method: string): RpcMessage[] {
    return this.messages.filter((m) => m.method === method);
  }

  /** Next message (already received or future) with this method that matches. */
  waitFor(method: string, match?: (params: any) => boolean, timeoutMs = 5000): Promise<any> {
    const pred = (m: RpcMessage) => m.method === method && (!match || match(m.params));
    const existing = this.messages.find(pred);
    if (existing) return Promise.resolve(existing.params);
    return this.waitNext(pred, timeoutMs, method).then((m) => m.params);
  }

  /** The next message arriving from now on that satisfies `pred`. */
  waitNext(pred: (m: RpcMessage) => boolean, timeoutMs = 5000, what = 'message'): Promise<RpcMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`Timed out waiting for ${what}`));
      }, timeoutMs);
      const done = (m: RpcMessage) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.waiters.push({ match: pred, resolve: done });
    });
  }

  /** Send an extension → server request and wait for the response message. */
  request(method: string, params?: unknown, timeoutMs = 5000): Promise<RpcMessage> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => (this.pending.delete(id), reject(new Error(`No response to ${method}`))), timeoutMs);
      this.pending.set(id, { resolve: (m) => (clearTimeout(timer), resolve(m)) });
      this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  notify(method: string, params?: unknown): void {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  sendRaw(frame: string): void {
    this.ws.send(frame);
  }

  /** Answer a pending confirmation.request. */
  confirm(id: string, decision: 'allow' | 'deny', alwaysAllow?: boolean): void {
    this.notify('confirmation.response', alwaysAllow === undefined ? { id, decision } : { id, decision, alwaysAllow });
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close(1000, 'test done');
    await Promise.race([this.closed, new Promise((r) => setTimeout(r, 2000))]);
  }

  private onMessage(text: string): void {
    let msg: RpcMessage;
    try {
      msg = JSON.parse(text);
    } catch {
      return;
    }
    this.messages.push(msg);
    if (msg.method === undefined && msg.id !== undefined && msg.id !== null && typeof msg.id === 'number') {
      const p = this.pending.get(msg.id);
      if (p) {
        this.pending.delete(msg.id);
        p.resolve(msg);
      }
    }
    if (msg.method === 'tool.cancel') {
      this.cancels.push({ dispatchId: msg.params.dispatchId, reason: msg.params.reason });
      this.cancelWaiters.get(msg.params.dispatchId)?.(msg.params.reason);
    }
    for (const w of [...this.waiters]) {
      if (w.match(msg)) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(msg);
      }
    }
    if (msg.method === 'tool.dispatch' && msg.id !== undefined && this.autoAnswer) void this.answerDispatch(msg);
    // The page of a tab, asked for an approval card: a tab listed in tabPages gets its URL (null: no
    // such tab); otherwise a fake extension cannot say (as an extension from before tab.page), so
    // cards name the tab only and calls are not bound to a page.
    if (msg.method === 'tab.page' && msg.id !== undefined) {
      const tabId = (msg.params as { tabId?: number } | undefined)?.tabId;
      if (tabId !== undefined && this.tabPages.has(tabId)) this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { url: this.tabPages.get(tabId) } }));
      else this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'Method not found: tab.page' } }));
    }
  }

  private async answerDispatch(msg: RpcMessage): Promise<void> {
    const params = msg.params as DispatchParams;
    const cancelled = new Promise<string>((resolve) => this.cancelWaiters.set(params.dispatchId, resolve));
    const api: DispatchApi = {
      dispatchId: params.dispatchId,
      progress: (progress, total, message) => this.notify('tool.progress', { dispatchId: params.dispatchId, progress, total, message }),
      log: (level, message, data) =>
        this.notify('plugin.log', { entries: [{ plugin: params.plugin, level, message, data, ts: Date.now(), dispatchId: params.dispatchId }] }),
      cancelled,
    };
    const handler = this.handlers.get(params.plugin === 'browser' ? params.tool : `${params.plugin}_${params.tool}`) ?? this.defaultHandler;
    try {
      const result = await handler(params, api);
      if (this.ws.readyState === WebSocket.OPEN) this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    } catch (err) {
      const e = err as FakeToolError;
      const data = e instanceof FakeToolError ? { code: e.code, ...e.data } : { code: 'internal' };
      if (this.ws.readyState === WebSocket.OPEN) {
        this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: e.message, data } }));
      }
    } finally {
      this.cancelWaiters.delete(params.dispatchId);
    }
  }
}

// ---------------------------------------------------------------- helpers for integration tests

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface TestPluginTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/**
 * Write a minimal plugin folder in the on-disk format (package.json + dist/tools.json +
 * dist/adapter.js) and return its path, for config.json localPlugins.
 */
export function writeTestPlugin(
  parent: string,
  name: string,
  tools: TestPluginTool[],
  configSchema?: Record<string, unknown>,
  /** More dist/tools.json fields (iconSvg, homepage …). */
  extra: Record<string, unknown> = {},
): string {
  const dir = join(parent, `plugin-${name}`);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `opentabs-plugin-${name}`, version: '1.0.0' }));
  writeFileSync(
    join(dir, 'dist', 'tools.json'),
    JSON.stringify({
      name,
      displayName: name[0].toUpperCase() + name.slice(1),
      description: `Test plugin ${name}`,
      version: '1.0.0',
      sdkVersion: '0.1.0',
      urlPatterns: ['http://127.0.0.1/*'],
      excludePatterns: [],
      ...(configSchema ? { configSchema } : {}),
      ...extra,
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description ?? `Tool ${t.name}`,
        inputSchema: t.inputSchema ?? { type: 'object', properties: {}, additionalProperties: false },
      })),
    }),
  );
  writeFileSync(join(dir, 'dist', 'adapter.js'), `(() => { /* ${name} test adapter */ })();\n`);
  return dir;
}

/** Write config.json (before the server starts) listing local plugins and permissions. */
export function writeTestConfig(configDir: string, config: { localPlugins?: string[]; permissions?: Record<string, unknown>; skipPermissions?: boolean }): void {
  mkdirSync(configDir, { recursive: true });
  writeFileSync(
    join(configDir, 'config.json'),
    JSON.stringify({ schemaVersion: 1, localPlugins: config.localPlugins ?? [], permissions: config.permissions ?? {}, pluginSettings: {}, ...(config.skipPermissions ? { skipPermissions: true } : {}) }),
  );
}

/** An MCP SDK client connected to /mcp or /mcp/gateway with the bearer secret. */
export async function connectMcp(baseUrl: string, secret: string, path: '/mcp' | '/mcp/gateway' = '/mcp', name = 'test-client'): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(baseUrl + path), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  await client.connect(transport);
  return client;
}

import { startTestServer, makeTempConfigDir, removeDir, type TestServer } from './server.ts';
import type { ServerOptions } from '../../server/context.ts';

/**
 * A test server whose config dir holds hand-written plugin folders listed in localPlugins.
 * stop() also removes the temp dir.
 */
export async function startPluginServer(
  opts: { plugins?: { name: string; tools: TestPluginTool[]; configSchema?: Record<string, unknown> }[]; permissions?: Record<string, unknown>; skipPermissionsInConfig?: boolean } & Partial<ServerOptions> = {},
): Promise<TestServer> {
  const { plugins = [], permissions, skipPermissionsInConfig, ...serverOpts } = opts;
  const dir = makeTempConfigDir('opentabs-h2-');
  try {
    const pluginDir = join(dir, 'local-plugins');
    const paths = plugins.map((p) => writeTestPlugin(pluginDir, p.name, p.tools, p.configSchema));
    writeTestConfig(dir, { localPlugins: paths, permissions, skipPermissions: skipPermissionsInConfig });
    const srv = await startTestServer({ skipPermissions: false, ...serverOpts, configDir: dir });
    const stop = srv.stop;
    return {
      ...srv,
      async stop() {
        try {
          await stop();
        } finally {
          removeDir(dir);
        }
      },
    };
  } catch (err) {
    removeDir(dir);
    throw err;
  }
}
