/**
 * The service worker: one Connection to the server, the PluginRuntime for plugin tabs, the
 * built-in tools, and the side panel (panel.ts). Everything is registered synchronously at the
 * top level so Chrome delivers events that woke the worker.
 */
import type { DispatchResult, ServerParams } from '../../server/protocol/methods.ts';
import { PANEL_PORT_NAME, recordOrigin } from '../shared/panel-protocol.ts';
import { extLog } from '../shared/ext-log.ts';
import { cancelBuiltin, runBuiltin } from '../tools/run.ts';
import { endAllEmulation } from '../tools/emulation.ts';
import { endLeftoverSessions } from '../tools/debugger.ts';
import { endAllInterception } from '../tools/intercept.ts';
import { endAllForcedStates } from '../tools/pseudo-state.ts';
import { sessionEnded } from '../tools/session-owned.ts';
import { fileMayHoldSecret, redactedUrl, setUrlPolicy, tabRefusal } from '../tools/url-policy.ts';
import { Connection, type ServerHandlers } from './connection.ts';
import { PluginRuntime } from './plugins.ts';
import { PageTools } from './page-tools.ts';
import { reconnectOnBrowserActivity } from './wake.ts';
import { Activity } from './activity.ts';
import { SidePanels } from './panel.ts';
import { PAGE_PLUGIN_PREFIX, PAGE_TOOLS_PORT_NAME } from '../../server/protocol/page-tools.ts';

const VERSION = chrome.runtime.getManifest().version;
const WAKE_ALARM = 'opentabs-wake';

/**
 * One handler per server → extension method, typed from server/protocol/methods.ts (a missing
 * method or a wrong params type fails tsc); the connection's RPC peer checks params first.
 */
const serverHandlers: ServerHandlers = {
  'sync.full': (p) => {
    plugins.setAll(p.plugins);
    setUrlPolicy({ allowFileUrls: p.allowFileUrls, protectedPaths: p.protectedPaths });
    void panels.refreshConfig();
  },
  'plugin.update': (p) => {
    plugins.update(p.plugin);
    void panels.refreshConfig();
  },
  'plugin.uninstall': async (p) => {
    await plugins.uninstall(p.name);
    void panels.refreshConfig();
    return { ok: true };
  },
  'plugins.changed': () => void panels.refreshConfig(),
  'tool.dispatch': (p) => {
    const argTab = typeof p.input.tabId === 'number' ? p.input.tabId : undefined;
    const tabId = p.tabId ?? argTab;
    // A plugin call reports its tab itself once picked (hooks.callTab, with the title and URL it
    // read anyway): a lookup here would be a second chrome.tabs.get round trip per call.
    const reportsTab = p.plugin !== 'browser' && !p.plugin.startsWith(PAGE_PLUGIN_PREFIX);
    if (tabId !== undefined && !reportsTab) void noteTab(p.dispatchId, tabId);
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
  // For an approval card (and the page the call is then bound to): what the tab shows now.
  'tab.page': async (p) => {
    const tab = await chrome.tabs.get(p.tabId).catch(() => null);
    if (!tab) return { url: null };
    const url = tab.url || tab.pendingUrl || '';
    return { url: tabRefusal(tab) ? redactedUrl(url) : url };
  },
  'confirmation.request': (p) => panels.confirmationRequested(p),
  'confirmation.resolved': (p) => panels.confirmationEnded(p.id),
  // An agent's MCP session ended: what only it changed on tabs (emulation, interception, forced states) ends.
  'session.ended': (p) => sessionEnded(p.session),
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
const panels = new SidePanels({ conn, plugins, activity, record: (w, start, tabId, origin) => void record(w, start, tabId, origin), recordState: () => ({ recording: [...recording.values()], recordError }) });
activity.onChange(() => {
  panels.updateBadge();
  panels.push();
});
plugins.hooks.callTab = (id, tabId, title, url) => activity.setTab(id, tabId, title, url);
plugins.hooks.progress = (id, p) => activity.progress(id, p);

async function runDispatch(p: ServerParams<'tool.dispatch'>): Promise<DispatchResult> {
  if (p.plugin === 'browser') return runBuiltin({ dispatchId: p.dispatchId, tool: p.tool, input: p.input, ...(p.tabId !== undefined ? { tabId: p.tabId } : {}), ...(p.approvedUrl !== undefined ? { approvedUrl: p.approvedUrl } : {}), ...(p.session !== undefined ? { session: p.session } : {}) }, env);
  if (p.plugin.startsWith(PAGE_PLUGIN_PREFIX)) return pageTools.dispatch(p);
  return plugins.dispatch(p);
}

/** The activity list names the tab a call acts on (title and origin), looked up after the start. */
async function noteTab(dispatchId: string, tabId: number): Promise<void> {
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  activity.setTab(dispatchId, tabId, tab?.title, tab?.url);
}

/**
 * The panel's Record: network capture with bodies on the tab its button named (the active tab of
 * the panel's window, by id and origin), through the same guard and handler as
 * browser_enable_network_capture; the panel then shows the command that drafts a plugin from it
 * (`plugin create … --from-capture tab:<id>`). The tab in front when the click arrives is not
 * looked up here: the agent brings any tab to the front without asking (browser_focus_tab), and so
 * does a page opening one, just before the user's click.
 */
const recording = new Map<number, { tabId: number; title: string; origin: string }>();
let recordError: string | null = null;
async function record(windowId: number, start: boolean, tabId?: number, origin?: string): Promise<void> {
  recordError = null;
  try {
    const [tab] = tabId !== undefined ? [await chrome.tabs.get(tabId)] : start ? [] : await chrome.tabs.query({ active: true, windowId });
    if (!tab?.id) throw new Error(start ? 'Record names no tab: click it again' : 'No active tab in this window');
    if (start && recordOrigin(tab.url) !== origin) {
      throw new Error(`Tab ${tab.id} shows ${recordOrigin(tab.url) || 'another page'} now, not ${origin ?? 'the page'} that Record named: nothing is recorded. Click Record again.`);
    }
    const tool = start ? 'browser_enable_network_capture' : 'browser_disable_network_capture';
    const input = start ? { tabId: tab.id, captureBodies: true } : { tabId: tab.id };
    // Started only while the tab still shows the site just checked (as an approved call runs).
    await runBuiltin({ dispatchId: `record-${tab.id}-${Date.now()}`, tool, input, tabId: tab.id, ...(start && tab.url ? { approvedUrl: tab.url } : {}) }, env);
    if (start) recording.set(tab.id, { tabId: tab.id, title: tab.title ?? '', origin: new URL(tab.url ?? '').origin });
    else recording.delete(tab.id);
  } catch (err) {
    recordError = (err as Error).message;
  }
  panels.push();
}
chrome.tabs.onRemoved.addListener((tabId) => {
  if (recording.delete(tabId)) panels.push();
});


chrome.runtime.onConnect.addListener((port) => {
  if (port.name === PANEL_PORT_NAME) return panels.attach(port);
  if (port.name === PAGE_TOOLS_PORT_NAME) return pageTools.attachPort(port);
  plugins.attachPort(port);
});

// ------------------------------------------------------------------ connection + tabs

/** Ends what an agent set that changes how the user's tabs behave (emulation, request interception, forced pseudo states). */
function endAgentOverrides(why: string): void {
  void endAllEmulation(why).catch(() => {});
  void endAllInterception(why).catch(() => {});
  void endAllForcedStates(why).catch(() => {});
}

let lastLogged = '';
conn.onState((s) => {
  // No agent is left to undo what changes the user's tabs: emulation, request interception and forced pseudo states end.
  if (s.status === 'disconnected') endAgentOverrides('the extension lost its connection to the OpenTabs server');
  const line = s.status === 'disconnected' ? `disconnected (${s.reason}): ${s.detail ?? ''}` : `${s.status}${s.port ? ` to port ${s.port}` : ''}`;
  if (line !== lastLogged) extLog(s.status === 'disconnected' ? 'warning' : 'info', line);
  lastLogged = line;
  panels.push();
});
conn.onOpen(() => {
  panels.reconnected();
  pageTools.resyncAll();
  void plugins.syncAll();
  void panels.refreshConfig();
});
plugins.onChange(() => panels.push());
// The side panel lists page tools by origin from config.getState: refresh it while one is open.
pageTools.onChange(() => {
  if (panels.open) void panels.refreshConfig();
});

// A new document in the tab (not a pushState / fragment change, which SPAs do all the time):
// its adapters are gone and calls running there fail now instead of timing out.
chrome.webNavigation.onCommitted.addListener((d) => {
  if (d.frameId === 0) plugins.tabNavigated(d.tabId);
});
/**
 * Title and URL changes are reported at most every TITLE_REPORT_MIN_MS: a page can set
 * document.title or pushState thousands of times a second, and each report looks at every tab and
 * may send tab.stateChanged. Changes in between go out together with the next report.
 */
const TITLE_REPORT_MIN_MS = 200;
let titleReport: ReturnType<typeof setTimeout> | null = null;
/** performance.now() of the last report: a wall clock set back would hold the next one off as long. */
let titleReportedAt = -Infinity;
function reportTitleChange(): void {
  if (titleReport) return;
  titleReport = setTimeout(() => {
    titleReport = null;
    titleReportedAt = performance.now();
    void plugins.reportChanges();
  }, Math.max(0, titleReportedAt + TITLE_REPORT_MIN_MS - performance.now()));
}
chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
  if (info.status === 'complete') {
    // No adapter ever runs in a file that may hold the secret (auth.json, an MCP client config), whatever a plugin's patterns say.
    if (tab.url && fileMayHoldSecret(tab.url)) return void plugins.reportChanges();
    void plugins.injectTab(tabId, tab.url).then(() => plugins.reportChanges());
  } else if (info.status !== undefined) {
    void plugins.reportChanges();
  } else if (info.url !== undefined || info.title !== undefined) {
    reportTitleChange();
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
// Debugger sessions a stopped worker held outlive it in Chrome: they end (debugger.ts).
void endLeftoverSessions();
void (async () => {
  await panels.restore();
  await plugins.restore();
  conn.ensureConnected();
  await pageTools.start();
})();

/** For e2e tests and debugging from the worker console. */
(globalThis as Record<string, unknown>).__opentabs = { conn, plugins, pageTools, panelState: () => panels.state() };
