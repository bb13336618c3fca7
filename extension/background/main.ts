/**
 * The service worker: one Connection to the server, the PluginRuntime for plugin tabs, the
 * built-in tools, and the relay for the side panel. Everything is registered synchronously at the
 * top level so Chrome delivers events that woke the worker.
 */
import type { ConfigState, DispatchResult, ServerParams } from '../../server/protocol/methods.ts';
import { PANEL_PORT_NAME, type PanelState, type PanelToWorker, type PendingConfirmation, type WorkerToPanel } from '../shared/panel-protocol.ts';
import { extLog } from '../shared/ext-log.ts';
import { cancelBuiltin, runBuiltin } from '../tools/run.ts';
import { insideProtectedFolder, setUrlPolicy } from '../tools/url-policy.ts';
import { Connection, type ServerHandlers } from './connection.ts';
import { PluginRuntime } from './plugins.ts';
import { PageTools } from './page-tools.ts';
import { reconnectOnBrowserActivity } from './wake.ts';
import { Activity } from './activity.ts';
import { PAGE_PLUGIN_PREFIX, PAGE_TOOLS_PORT_NAME } from '../../server/protocol/page-tools.ts';

const VERSION = chrome.runtime.getManifest().version;
const WAKE_ALARM = 'opentabs-wake';
/** config.* and plugin.* requests may be relayed from the panel; nothing else. */
const PANEL_METHODS = /^(config\.(getState|setToolPermission|setPluginPermission|setSkipPermissions|setPluginSettings|setAllowFileUrls|setOriginPermission)|plugin\.(search|install|updateFromRegistry|remove|checkUpdates|removeBySpecifier)|folder\.open)$/;

let pending: PendingConfirmation[] = [];
let config: ConfigState | null = null;
let configError: string | null = null;
const panels = new Set<chrome.runtime.Port>();
/** While a side panel is open, refresh config.getState this often (MCP client count in the header). */
const PANEL_REFRESH_MS = 5_000;
let panelRefresh: ReturnType<typeof setInterval> | null = null;

/**
 * One handler per server → extension method, typed from server/protocol/methods.ts (a missing
 * method or a wrong params type fails tsc); the connection's RPC peer checks params first.
 */
const serverHandlers: ServerHandlers = {
  'sync.full': (p) => {
    plugins.setAll(p.plugins);
    setUrlPolicy({ allowFileUrls: p.allowFileUrls, protectedPaths: p.protectedPaths });
    void refreshConfig();
  },
  'plugin.update': (p) => {
    plugins.update(p.plugin);
    void refreshConfig();
  },
  'plugin.uninstall': async (p) => {
    await plugins.uninstall(p.name);
    void refreshConfig();
    return { ok: true };
  },
  'plugins.changed': () => void refreshConfig(),
  'tool.dispatch': (p) => {
    const argTab = typeof p.input.tabId === 'number' ? p.input.tabId : undefined;
    const tabId = p.tabId ?? argTab;
    if (tabId !== undefined) void noteTab(p.dispatchId, tabId);
    return activity.track({ ...p, tool: p.plugin === 'browser' ? p.tool : `${p.plugin}_${p.tool}`, ...(tabId !== undefined ? { tabId } : {}) }, () => runDispatch(p), (reason) => {
      if (p.plugin === 'browser') cancelBuiltin(p.dispatchId, reason);
      else if (p.plugin.startsWith(PAGE_PLUGIN_PREFIX)) pageTools.cancel(p.dispatchId, reason);
      else plugins.cancel(p.dispatchId, reason);
    });
  },
  'tool.cancel': (p) => {
    if (!cancelBuiltin(p.dispatchId, p.reason) && !pageTools.cancel(p.dispatchId, p.reason)) plugins.cancel(p.dispatchId, p.reason);
  },
  // Sent only while a side panel is open (panel.state); the activity list is kept from the
  // dispatches themselves, which also know the tab and the progress.
  'tool.invocationStart': () => {},
  'tool.invocationEnd': () => {},
  'confirmation.request': (p) => {
    pending = [...pending.filter((c) => c.id !== p.id), p];
    savePending();
  },
  'confirmation.resolved': (p) => {
    pending = pending.filter((c) => c.id !== p.id);
    savePending();
  },
  // Let the notification's socket frame settle, then reload (the new worker reconnects).
  'extension.reload': () => void setTimeout(() => chrome.runtime.reload(), 50),
  pong: () => {},
};

const conn = new Connection(serverHandlers);
reconnectOnBrowserActivity(conn);
const plugins = new PluginRuntime(conn);
const pageTools = new PageTools(conn);
const env = { conn, plugins, pageTools, version: VERSION };
const activity = new Activity();
activity.onChange(() => {
  updateBadge();
  pushState();
});
plugins.hooks.callTab = (id, tabId, title, url) => activity.setTab(id, tabId, title, url);
plugins.hooks.progress = (id, p) => activity.progress(id, p);

async function runDispatch(p: ServerParams<'tool.dispatch'>): Promise<DispatchResult> {
  if (p.plugin === 'browser') return runBuiltin({ dispatchId: p.dispatchId, tool: p.tool, input: p.input, ...(p.tabId !== undefined ? { tabId: p.tabId } : {}) }, env);
  if (p.plugin.startsWith(PAGE_PLUGIN_PREFIX)) return pageTools.dispatch(p);
  return plugins.dispatch(p);
}

/** The activity list names the tab a call acts on (title and origin), looked up after the start. */
async function noteTab(dispatchId: string, tabId: number): Promise<void> {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  activity.setTab(dispatchId, tabId, tab?.title, tab?.url);
}

/**
 * The panel's Record: network capture with bodies on the active tab of the panel's window, through
 * the same guard and handler as browser_enable_network_capture; the panel then shows the command
 * that drafts a plugin from it (`plugin create … --from-capture tab:<id>`).
 */
const recording = new Map<number, { tabId: number; title: string; origin: string }>();
let recordError: string | null = null;
async function record(windowId: number, start: boolean, stopTabId?: number): Promise<void> {
  recordError = null;
  try {
    const [tab] = stopTabId !== undefined ? [await chrome.tabs.get(stopTabId)] : await chrome.tabs.query({ active: true, windowId });
    if (!tab?.id) throw new Error('No active tab in this window');
    const tool = start ? 'browser_enable_network_capture' : 'browser_disable_network_capture';
    const input = start ? { tabId: tab.id, captureBodies: true } : { tabId: tab.id };
    await runBuiltin({ dispatchId: `record-${tab.id}-${Date.now()}`, tool, input, tabId: tab.id }, env);
    if (start) recording.set(tab.id, { tabId: tab.id, title: tab.title ?? '', origin: new URL(tab.url ?? '').origin });
    else recording.delete(tab.id);
  } catch (err) {
    recordError = (err as Error).message;
  }
  pushState();
}
chrome.tabs.onRemoved.addListener((tabId) => {
  if (recording.delete(tabId)) pushState();
});

// ------------------------------------------------------------------ panel state

function panelState(): PanelState {
  return {
    connection: conn.state,
    plugins: [...plugins.plugins.values()].map((p) => ({ ...p, tabState: plugins.tabStateOf(p.name) ?? 'closed', tabs: plugins.tabsOf(p.name) })),
    pending,
    config,
    configError,
    ...activity.snapshot(),
    recording: [...recording.values()],
    recordError,
  };
}

let pushQueued = false;
function pushState(): void {
  // Nothing to build when no side panel listens (the common case during tool calls).
  if (pushQueued || panels.size === 0) return;
  pushQueued = true;
  queueMicrotask(() => {
    pushQueued = false;
    const msg: WorkerToPanel = { type: 'state', state: panelState() };
    for (const port of panels) {
      try {
        port.postMessage(msg);
      } catch {}
    }
  });
}

function savePending(): void {
  pending = pending.filter((c) => c.expiresAt > Date.now());
  updateBadge();
  void chrome.storage.session.set({ pending }).catch(() => {});
  pushState();
}

/**
 * The action icon's badge: approvals waiting (amber) come first, since they need the user; else
 * the number of calls running now (blue), so the user sees the agent at work.
 */
let lastBadge = '';
/**
 * Badge updates are coalesced: each one is a call into the browser, and most tool calls end within
 * milliseconds; a call still running after BADGE_DELAY_MS shows up, one that ended before never
 * costs a badge update.
 */
const BADGE_DELAY_MS = 300;
let badgeTimer: ReturnType<typeof setTimeout> | null = null;
function updateBadge(): void {
  badgeTimer ??= setTimeout(() => {
    badgeTimer = null;
    applyBadge();
  }, BADGE_DELAY_MS);
}
function applyBadge(): void {
  const waiting = pending.length;
  const busy = activity.runningCount;
  const text = waiting ? String(waiting) : busy ? String(busy) : '';
  const color = waiting ? '#d97706' : '#2563eb';
  if (`${text}|${color}` === lastBadge) return;
  lastBadge = `${text}|${color}`;
  void chrome.action.setBadgeText({ text }).catch(() => {});
  void chrome.action.setBadgeBackgroundColor({ color }).catch(() => {});
}

async function refreshConfig(): Promise<void> {
  if (!conn.connected) {
    config = null;
    pushState();
    return;
  }
  try {
    config = await conn.request('config.getState', {});
    configError = null;
    // The server's list is authoritative (it re-sends unanswered confirmations on reconnect).
    pending = config.pendingConfirmations;
    savePending();
  } catch (err) {
    configError = (err as Error).message;
  }
  pushState();
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name === PANEL_PORT_NAME) {
    // The panel can approve calls and change permissions: only the real side panel may connect as
    // it. sidepanel.html opened in a tab (which tools could drive) has sender.tab; content scripts
    // and other extensions have another id or URL.
    if (!isRealSidePanel(port.sender)) return port.disconnect();
    panels.add(port);
    if (panels.size === 1) panelsOpened();
    port.onDisconnect.addListener(() => {
      panels.delete(port);
      if (panels.size === 0) panelsClosed();
    });
    port.onMessage.addListener((msg: PanelToWorker) => void onPanelMessage(port, msg));
    conn.ensureConnected();
    pushState();
    void refreshConfig();
    return;
  }
  if (port.name === PAGE_TOOLS_PORT_NAME) return pageTools.attachPort(port);
  plugins.attachPort(port);
});

const SIDE_PANEL_URL = chrome.runtime.getURL('sidepanel.html');

function isRealSidePanel(sender: chrome.runtime.MessageSender | undefined): boolean {
  if (!sender || sender.tab !== undefined || sender.id !== chrome.runtime.id || !sender.url) return false;
  const url = sender.url.split(/[?#]/)[0];
  return url === SIDE_PANEL_URL;
}

/**
 * The server sends tool.invocationStart/End only while a panel is open (they cost a frame per
 * call otherwise); it is told on open, on close and again after each reconnect.
 */
function panelsOpened(): void {
  conn.notify('panel.state', { open: true });
  panelRefresh ??= setInterval(() => void refreshConfig(), PANEL_REFRESH_MS);
}
function panelsClosed(): void {
  conn.notify('panel.state', { open: false });
  if (panelRefresh) clearInterval(panelRefresh);
  panelRefresh = null;
}

async function onPanelMessage(port: chrome.runtime.Port, msg: PanelToWorker): Promise<void> {
  if (msg.type === 'refresh') return void refreshConfig();
  if (msg.type === 'stop') return void activity.stop(msg.dispatchId);
  if (msg.type === 'record') return void record(msg.windowId, msg.start, msg.tabId);
  if (msg.type === 'confirm') {
    conn.notify('confirmation.response', { id: msg.id, decision: msg.decision, alwaysAllow: msg.alwaysAllow });
    pending = pending.filter((c) => c.id !== msg.id);
    savePending();
    if (msg.alwaysAllow) void refreshConfig();
    return;
  }
  let reply: WorkerToPanel;
  try {
    if (!PANEL_METHODS.test(msg.method)) throw new Error(`The side panel may not call ${msg.method}`);
    const result = await conn.request(msg.method as 'config.getState', msg.params as never);
    reply = { type: 'response', id: msg.id, ok: true, result };
  } catch (err) {
    reply = { type: 'response', id: msg.id, ok: false, error: (err as Error).message };
  }
  try {
    port.postMessage(reply);
  } catch {}
  if (msg.method.startsWith('config.set') || msg.method.startsWith('plugin.')) void refreshConfig();
}

// ------------------------------------------------------------------ connection + tabs

let lastLogged = '';
conn.onState((s) => {
  const line = s.status === 'disconnected' ? `disconnected (${s.reason}): ${s.detail ?? ''}` : `${s.status}${s.port ? ` to port ${s.port}` : ''}`;
  if (line !== lastLogged) extLog(s.status === 'disconnected' ? 'warning' : 'info', line);
  lastLogged = line;
  pushState();
});
conn.onOpen(() => {
  if (panels.size > 0) conn.notify('panel.state', { open: true });
  pageTools.resyncAll();
  void plugins.syncAll();
  void refreshConfig();
});
plugins.onChange(() => pushState());
// The side panel lists page tools by origin from config.getState: refresh it while one is open.
pageTools.onChange(() => {
  if (panels.size > 0) void refreshConfig();
});

// A new document in the tab (not a pushState / fragment change, which SPAs do all the time):
// its adapters are gone and calls running there fail now instead of timing out.
chrome.webNavigation.onCommitted.addListener((d) => {
  if (d.frameId === 0) plugins.tabNavigated(d.tabId);
});
chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
  if (info.status === 'complete') {
    // No adapter ever runs in the config folder (auth.json), whatever a plugin's patterns say.
    if (tab.url && insideProtectedFolder(tab.url)) return void plugins.reportChanges();
    void plugins.injectTab(tabId, tab.url).then(() => plugins.reportChanges());
  } else if (info.url !== undefined || info.title !== undefined || info.status !== undefined) {
    void plugins.reportChanges();
  }
});
// Any change to tabs or windows can change which tab is best for a plugin.
const tabsChanged = () => plugins.tabsChanged();
chrome.tabs.onCreated.addListener(tabsChanged);
chrome.tabs.onUpdated.addListener(tabsChanged);
chrome.tabs.onRemoved.addListener(tabsChanged);
chrome.tabs.onActivated.addListener(tabsChanged);
chrome.tabs.onAttached.addListener(tabsChanged);
chrome.tabs.onDetached.addListener(tabsChanged);
chrome.tabs.onReplaced.addListener(tabsChanged);
chrome.windows.onFocusChanged.addListener(tabsChanged);
chrome.windows.onRemoved.addListener(tabsChanged);
chrome.tabs.onRemoved.addListener((tabId) => {
  plugins.tabRemoved(tabId);
  void plugins.reportChanges();
});
chrome.tabs.onActivated.addListener(() => void plugins.reportChanges());

chrome.alarms.onAlarm.addListener((a) => {
  if (a.name === WAKE_ALARM) conn.ensureConnected();
});
chrome.runtime.onStartup.addListener(() => conn.ensureConnected());
chrome.runtime.onInstalled.addListener(() => {
  void chrome.sidePanel?.setPanelBehavior?.({ openPanelOnActionClick: true }).catch(() => {});
});

// The worker can be stopped and restarted by Chrome at any time: restore what must survive, then connect.
void chrome.alarms.create(WAKE_ALARM, { periodInMinutes: 0.5 });
void (async () => {
  const saved = (await chrome.storage.session.get('pending').catch(() => ({}))) as { pending?: PendingConfirmation[] };
  if (Array.isArray(saved.pending)) pending = saved.pending;
  await plugins.restore();
  conn.ensureConnected();
  await pageTools.start();
})();

/** For e2e tests and debugging from the worker console. */
(globalThis as Record<string, unknown>).__opentabs = { conn, plugins, pageTools, panelState };
