/**
 * The service worker: wires the server connection, plugin tabs, built-in tools and the side
 * panel together. Every Chrome event listener is registered synchronously at the top level so a
 * worker Chrome restarted for an event receives it.
 */
import * as v from 'valibot';
import { ServerToExtension, type ServerParams, type DispatchResult } from '../../server/protocol/methods.ts';
import { BROWSER_PLUGIN } from '../../server/tools/browser-catalog.ts';
import { Connection, MethodNotFound } from './connection.ts';
import { PluginTabs } from './plugin-tabs.ts';
import { store } from './state.ts';
import { TOOL_HANDLERS } from '../tools/index.ts';
import { ToolFailure, toFailure } from '../shared/errors.ts';
import { RELAYED_METHODS, SIDEPANEL_PORT_NAME, type PanelToWorker, type WorkerToPanel } from '../shared/sidepanel-messages.ts';

const KEEPALIVE_ALARM = 'opentabs-keepalive';

const restored = store.restore();
const conn: Connection = new Connection({
  onOpen: () => void onOpen(),
  onRequest: (m, p) => restored.then(() => onRequest(m, p)),
  onNotification: (m, p) => void restored.then(() => onNotification(m, p)),
});
const tabs = new PluginTabs(conn);
const builtinCalls = new Map<string, AbortController>();
const panels = new Set<chrome.runtime.Port>();

// ------------------------------------------------------------------ server messages

function checked<M extends keyof typeof ServerToExtension>(method: M, params: unknown): ServerParams<M> {
  const r = v.safeParse(ServerToExtension[method].params as v.GenericSchema, params);
  if (!r.success) throw new ToolFailure('invalid_arguments', `Invalid ${method} params: ${r.issues[0].message}`, { category: 'validation' });
  return r.output as ServerParams<M>;
}

async function onOpen(): Promise<void> {
  await restored;
  await tabs.recompute(true);
  void refreshConfigState();
}

async function onRequest(method: string, params: unknown): Promise<unknown> {
  switch (method) {
    case 'tool.dispatch':
      return dispatch(checked('tool.dispatch', params));
    case 'plugin.uninstall': {
      const { name } = checked('plugin.uninstall', params);
      store.plugins.delete(name);
      await tabs.removePlugin(name);
      void store.persist();
      return { ok: true };
    }
    default:
      throw new MethodNotFound(`Method not found: ${method}`);
  }
}

function onNotification(method: string, params: unknown): void {
  switch (method) {
    case 'sync.full': {
      const p = checked('sync.full', params);
      store.plugins = new Map(p.plugins.map((x) => [x.name, x]));
      store.browserTools = p.browserTools;
      store.serverVersion = p.serverVersion;
      store.changed();
      void store.persist();
      void tabs.injectAll().then(() => tabs.recompute(false));
      void refreshConfigState();
      return;
    }
    case 'plugin.update': {
      const { plugin } = checked('plugin.update', params);
      store.plugins.set(plugin.name, plugin);
      store.changed();
      void store.persist();
      void tabs.injectAll(plugin.name);
      return;
    }
    case 'plugins.changed':
      void refreshConfigState();
      return;
    case 'tool.cancel': {
      const { dispatchId, reason } = checked('tool.cancel', params);
      builtinCalls.get(dispatchId)?.abort(new Error(reason));
      tabs.cancel(dispatchId, reason);
      return;
    }
    case 'tool.invocationStart': {
      const p = checked('tool.invocationStart', params);
      store.invocations.set(p.dispatchId, p);
      store.changed();
      return;
    }
    case 'tool.invocationEnd': {
      const p = checked('tool.invocationEnd', params);
      store.invocations.delete(p.dispatchId);
      store.changed();
      return;
    }
    case 'confirmation.request': {
      const p = checked('confirmation.request', params);
      store.pending.set(p.id, p);
      pendingChanged();
      return;
    }
    case 'confirmation.resolved': {
      const p = checked('confirmation.resolved', params);
      store.pending.delete(p.id);
      pendingChanged();
      return;
    }
    case 'extension.reload':
      chrome.runtime.reload();
      return;
    case 'pong':
      return;
    default:
      store.log('warn', `unknown notification ${method}`);
  }
}

async function dispatch(p: ServerParams<'tool.dispatch'>): Promise<DispatchResult> {
  if (p.plugin !== BROWSER_PLUGIN) return tabs.dispatch(p);
  const handler = TOOL_HANDLERS[p.tool];
  if (!handler) throw new ToolFailure('unknown_tool', `This extension version does not implement ${p.tool}; update the extension.`, { category: 'not_found' });
  const ac = new AbortController();
  builtinCalls.set(p.dispatchId, ac);
  try {
    return await handler(p.input, { signal: ac.signal, extensionState });
  } catch (err) {
    throw toFailure(err);
  } finally {
    builtinCalls.delete(p.dispatchId);
  }
}

async function extensionState(): Promise<Record<string, unknown>> {
  const snaps = await tabs.snapshots();
  return {
    extensionVersion: chrome.runtime.getManifest().version,
    extensionId: chrome.runtime.id,
    connection: store.connection,
    serverVersion: store.serverVersion,
    plugins: [...store.plugins.values()].map((p) => ({
      name: p.name,
      displayName: p.displayName,
      version: p.version,
      adapterHash: p.adapterHash,
      tabState: snaps[p.name]?.state ?? 'closed',
      tabs: snaps[p.name]?.tabs ?? [],
    })),
    adapters: tabs.adapterSummary(),
    pendingConfirmations: store.pending.size,
    browserTools: store.browserTools.length,
    recentLogs: store.logs.slice(-20),
  };
}

async function refreshConfigState(): Promise<void> {
  if (!conn.open) return;
  try {
    const s = await conn.request('config.getState', {});
    store.failedPlugins = s.failedPlugins;
    store.skipPermissions = s.skipPermissions;
    store.browserTools = s.browserTools;
    store.plugins = new Map(s.plugins.map((x) => [x.name, x]));
    store.pending = new Map(s.pendingConfirmations.map((c) => [c.id, c]));
    pendingChanged();
    void store.persist();
  } catch (err) {
    store.log('warn', `config.getState: ${(err as Error).message}`);
  }
}

// ------------------------------------------------------------------ approvals badge

function pendingChanged(): void {
  const n = [...store.pending.values()].filter((c) => c.expiresAt > Date.now()).length;
  void chrome.action.setBadgeText({ text: n > 0 ? String(n) : '' }).catch(() => {});
  if (n > 0) void chrome.action.setBadgeBackgroundColor({ color: '#d97706' }).catch(() => {});
  store.changed();
  void store.persist();
}

// ------------------------------------------------------------------ side panel

function postPanel(port: chrome.runtime.Port, msg: WorkerToPanel): void {
  try {
    port.postMessage(msg);
  } catch {
    panels.delete(port);
  }
}

store.onChange(() => {
  const state = store.view();
  for (const p of panels) postPanel(p, { type: 'state', state });
});

async function onPanelMessage(port: chrome.runtime.Port, msg: PanelToWorker): Promise<void> {
  await restored;
  if (msg.type === 'confirm') {
    if (!conn.notify('confirmation.response', { id: msg.id, decision: msg.decision, ...(msg.alwaysAllow ? { alwaysAllow: true } : {}) })) return;
    store.pending.delete(msg.id);
    pendingChanged();
    return;
  }
  if (msg.type === 'reconnect') return conn.reconnectNow();
  if (msg.type !== 'request') return;
  if (!(RELAYED_METHODS as readonly string[]).includes(msg.method)) {
    return postPanel(port, { type: 'response', id: msg.id, ok: false, error: `Unknown method ${msg.method}` });
  }
  try {
    const result = await conn.request(msg.method as 'config.getState', msg.params as {});
    postPanel(port, { type: 'response', id: msg.id, ok: true, result });
    if (msg.method.startsWith('config.') && msg.method !== 'config.getState') void refreshConfigState();
  } catch (err) {
    postPanel(port, { type: 'response', id: msg.id, ok: false, error: (err as Error).message });
  }
}

// ------------------------------------------------------------------ Chrome events (top level)

chrome.runtime.onConnect.addListener((port) => {
  if (tabs.onConnect(port)) return;
  if (port.name !== SIDEPANEL_PORT_NAME) return;
  panels.add(port);
  port.onDisconnect.addListener(() => panels.delete(port));
  port.onMessage.addListener((msg: PanelToWorker) => void onPanelMessage(port, msg));
  void restored.then(() => {
    postPanel(port, { type: 'state', state: store.view() });
    void refreshConfigState();
  });
});

chrome.tabs.onUpdated.addListener((tabId, change, tab) => {
  if (change.status === 'complete') void restored.then(() => tabs.injectTab(tab));
  if (change.url !== undefined || change.title !== undefined || change.status !== undefined) tabs.scheduleRecompute();
});
chrome.tabs.onRemoved.addListener((tabId) => tabs.onTabGone(tabId, 'was closed'));
chrome.tabs.onCreated.addListener(() => tabs.scheduleRecompute());
chrome.webNavigation.onCommitted.addListener((d) => {
  if (d.frameId === 0) tabs.onTabGone(d.tabId, 'navigated away');
});

chrome.alarms.onAlarm.addListener((a) => {
  if (a.name === KEEPALIVE_ALARM) conn.ensure();
});
chrome.runtime.onInstalled.addListener(() => void chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 }));
chrome.runtime.onStartup.addListener(() => void chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 }));
void chrome.sidePanel?.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});

void restored.then(() => {
  pendingChanged();
  conn.ensure();
});

// Handy in DevTools and for tests that drive the worker directly.
(globalThis as Record<string, unknown>).__opentabs = { store, conn, tabs };
