/**
 * The side panel: plain DOM, re-rendered from the worker's PanelState on every push (a section the
 * user is operating waits until they are done with it: in-use.ts). It never
 * talks to the server itself; config.* requests and Stop go through the worker, which accepts them
 * only from the real side panel. Sections: header (connection), activity (running calls, recent
 * ones), approvals, plugins, tools with their permissions (filterable), settings.
 */
import type { Permission } from '../../server/protocol/methods.ts';
import { PANEL_PORT_NAME, recordOrigin, type PanelState, type PanelToWorker, type WorkerToPanel } from '../shared/panel-protocol.ts';
import { renderActivity, tickElapsed } from './activity-view.ts';
import { armApprovalButtons, renderApprovals } from './approvals.ts';
import { watchCardTabs } from './card-tabs.ts';
import { ARM_MS, forgetAll, stillFor, watchPointerArrivals } from './arming.ts';
import { h, showHidden } from './dom.ts';
import { heldForUser } from './in-use.ts';
import { renderHeader } from './header.ts';
import { renderPageOrigins, renderPlugins } from './plugins-view.ts';
import { renderRecording } from './record-view.ts';
import { renderToolGroups, type ToolActions } from './tools-view.ts';

let port: chrome.runtime.Port;
let state: PanelState | null = null;
let nextId = 1;
const waiting = new Map<number, (r: Extract<WorkerToPanel, { type: 'response' }>) => void>();
let lastError: string | null = null;
let filter = '';

function connect(): void {
  port = chrome.runtime.connect({ name: PANEL_PORT_NAME });
  port.onMessage.addListener((msg: WorkerToPanel) => {
    if (msg.type === 'state') {
      state = msg.state;
      render();
      return;
    }
    waiting.get(msg.id)?.(msg);
    waiting.delete(msg.id);
  });
  // The worker was restarted by Chrome: connect again (which wakes it).
  port.onDisconnect.addListener(() => setTimeout(connect, 200));
}

function send(msg: PanelToWorker): void {
  try {
    port.postMessage(msg);
  } catch {}
}

async function request(method: string, params: unknown, rerender = true): Promise<boolean> {
  const id = nextId++;
  const res = await new Promise<Extract<WorkerToPanel, { type: 'response' }>>((resolve) => {
    waiting.set(id, resolve);
    send({ type: 'request', id, method, params });
  });
  lastError = res.ok ? null : `${method}: ${res.error}`;
  if (rerender) render();
  return res.ok;
}

const toolActions: ToolActions = {
  setTool: (plugin, tool, permission) => void request('config.setToolPermission', { plugin, tool, permission }),
  setPlugin: (plugin, permission) => void request('config.setPluginPermission', { plugin, permission }),
  setGroup: (tools, permission) =>
    void (async () => {
      for (const tool of tools) if (!(await request('config.setToolPermission', { plugin: 'browser', tool, permission }, false))) break;
      render();
    })(),
};

/** Rebuild one section, unless the user is operating a control in it (in-use.ts). */
function section(id: string, build: () => HTMLElement[]): void {
  const el = document.getElementById(id)!;
  if (heldForUser(el, render)) return;
  el.replaceChildren(...build());
}

async function recordTab(start: boolean, tabId: number, origin?: string): Promise<void> {
  const w = await chrome.windows.getCurrent();
  send({ type: 'record', windowId: w.id!, start, tabId, ...(origin !== undefined ? { origin } : {}) });
}

/**
 * The tab Record names on its button: the active tab of the panel's window, looked up again
 * whenever another tab comes to the front or a tab's page changes. The agent brings any tab to the
 * front without asking (browser_focus_tab), and a page can open one in front: the click records
 * the tab named, and a tab named anew takes a click only once it has stayed named for ARM_MS (its
 * arming key is the tab and its origin), so a switch just before the click records nothing.
 */
let recordTarget: { tabId: number; origin: string } | null = null;
async function lookUpRecordTarget(): Promise<void> {
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true }).catch(() => [] as chrome.tabs.Tab[]);
  const next = tab?.id !== undefined ? { tabId: tab.id, origin: recordOrigin(tab.url) } : null;
  if (next?.tabId === recordTarget?.tabId && next?.origin === recordTarget?.origin) return;
  recordTarget = next;
  render();
}
chrome.tabs.onActivated.addListener(() => void lookUpRecordTarget());
chrome.tabs.onUpdated.addListener((_tabId, info) => {
  if (info.url !== undefined || info.status !== undefined) void lookUpRecordTarget();
});
chrome.tabs.onRemoved.addListener(() => void lookUpRecordTarget());
chrome.tabs.onAttached.addListener(() => void lookUpRecordTarget());
chrome.tabs.onDetached.addListener(() => void lookUpRecordTarget());
void lookUpRecordTarget();

/**
 * Record starts network capture with bodies in the tab it names, which the agent's
 * browser_enable_network_capture must ask for, and the agent reads what it records (its
 * browser_get_network_requests runs without asking): a click on it counts only once it has stayed
 * in place, naming the same tab (arming.ts), as the guarded toggles below. Stop recording always works.
 */
function startRecording(button: HTMLButtonElement): void {
  const target = recordTarget;
  if (!target || button.dataset.armKey !== recordArmKey(target) || stillFor(button.dataset.armKey!, button) < ARM_MS) {
    button.title = 'This moved just now, or names another tab than a moment ago; click again to start recording';
    return;
  }
  void recordTab(true, target.tabId, target.origin);
}

/** Record's arming key: another tab or page named is a new button. */
const recordArmKey = (t: { tabId: number; origin: string }) => `record-start:${t.tabId}:${t.origin}`;

/**
 * Turning one of these on takes every approval away or opens file:// pages to the tools: a click
 * on it counts only once it has stayed in place (arming.ts). Everything above it moves as the
 * agent's calls start and end, so a click aimed higher up could land on it. Turning off always works.
 */
function guardedToggle(box: HTMLInputElement, key: string): HTMLInputElement {
  box.dataset.armKey = key;
  box.addEventListener('click', (e) => {
    if (!box.checked || stillFor(key, box) >= ARM_MS) return;
    e.preventDefault(); // the box stays off, no change event
    box.title = 'This moved just now; click again to turn it on';
  });
  return box;
}

function settingsToggles(): HTMLElement[] {
  const cfg = state?.config;
  if (!cfg) return [];
  const box = guardedToggle(h('input', { type: 'checkbox', 'data-testid': 'skip-permissions', checked: cfg.skipPermissions }) as HTMLInputElement, 'setting:skip-permissions');
  box.addEventListener('change', () => void request('config.setSkipPermissions', { skip: box.checked }));
  const files = guardedToggle(h('input', { type: 'checkbox', 'data-testid': 'allow-file-urls', checked: cfg.allowFileUrls === true }) as HTMLInputElement, 'setting:allow-file-urls');
  files.addEventListener('change', () => void request('config.setAllowFileUrls', { allow: files.checked }));
  return [
    h('h2', {}, 'Settings'),
    h('label', { class: 'detail toggle', title: '"ask" tools run without asking; "off" tools stay off' }, box, ' Skip approvals (run "ask" tools without asking)'),
    h('label', { class: 'detail toggle', title: 'Never the OpenTabs config folder, which holds the secret' }, files, ' Let tools open and read file:// pages'),
  ];
}

function render(): void {
  if (!state) return;
  const st = state;
  const cfg = st.config;
  renderHeader(st.connection, cfg);
  section('errors', () => [
    // Server errors quote what plugins and pages wrote (a setting's choices, a tool's name).
    ...(lastError ? [h('div', { class: 'card error', id: 'last-error' }, showHidden(lastError))] : []),
    ...(st.configError ? [h('div', { class: 'detail error', id: 'config-error' }, showHidden(st.configError))] : []),
  ]);
  section('activity', () => renderActivity(st.running, st.history, (dispatchId) => send({ type: 'stop', dispatchId })));
  watchCardTabs(st.pending, render);
  const risks = new Map((cfg?.browserTools ?? []).flatMap((t) => (t.risk ? [[t.name, t.risk] as const] : [])));
  section('approvals', () => renderApprovals(st.pending, (id, decision, alwaysAllow) => send({ type: 'confirm', id, decision, alwaysAllow }), risks, render));
  section('plugins', () => {
    const busy = new Set(st.running.map((c) => c.tabId).filter((t): t is number => t !== undefined));
    const byName = new Map(st.plugins.map((p) => [p.name, p]));
    return [
      ...renderPlugins(
        cfg?.plugins ?? st.plugins,
        (name) => byName.get(name)?.tabState ?? 'closed',
        busy,
        (name) => byName.get(name)?.tabs ?? [],
        (plugin, settings) => void request('config.setPluginSettings', { plugin, settings }),
      ),
      ...(cfg?.failedPlugins.length
        ? [
            h('h2', {}, 'Failed to load'),
            ...cfg.failedPlugins.map((f) => h('div', { class: 'card', 'data-failed': f.name ?? f.path, 'data-testid': 'failed-plugin' }, h('strong', {}, showHidden(f.name ?? f.path)), h('div', { class: 'error' }, showHidden(f.error)))),
          ]
        : []),
    ];
  });
  section('record', () =>
    st.connection.status === 'connected'
      ? renderRecording(st.recording, st.recordError, st.connection.cli ?? 'opentabs', recordTarget && { ...recordTarget, armKey: recordArmKey(recordTarget) }, startRecording, (tabId) => void recordTab(false, tabId))
      : [],
  );
  section('page-tools', () => renderPageOrigins(cfg?.pageOrigins ?? [], (origin, permission: Permission) => void request('config.setOriginPermission', { origin, permission })));
  section('tool-groups', () => renderToolGroups(cfg, filter, toolActions));
  section('settings', settingsToggles);
  // Last: every section has its new size, so guarded controls are where they will be shown.
  armApprovalButtons(document.getElementById('approvals')!);
  armToggles();
}

let togglesTimer: ReturnType<typeof setTimeout> | null = null;

/** Guarded toggles that are off, and guarded buttons, stay disabled until they have been in place for ARM_MS. */
function armToggles(): void {
  let next = Infinity;
  for (const box of document.querySelectorAll<HTMLInputElement | HTMLButtonElement>('input[data-arm-key], button[data-arm-key]')) {
    const wait = ARM_MS - stillFor(box.dataset.armKey!, box);
    box.disabled = !(box instanceof HTMLInputElement && box.checked) && wait > 0;
    if (box.disabled) next = Math.min(next, wait);
  }
  // Permission selects (dom.ts) check their wait when a choice is made; measured here, a move by a render counts.
  for (const sel of document.querySelectorAll<HTMLSelectElement>('select[data-arm-select]')) stillFor(sel.dataset.armSelect!, sel);
  if (togglesTimer !== null) clearTimeout(togglesTimer);
  togglesTimer = next === Infinity ? null : setTimeout(() => {
    togglesTimer = null;
    armToggles();
  }, Math.ceil(next) + 10);
}

/**
 * Something over the panel may have gone away from under the pointer (arming.ts): the approval
 * buttons and the guarded toggles wait ARM_MS again before a click on them counts.
 */
function uncovered(): void {
  forgetAll();
  rearm();
}

/** Measures the cards and toggles now (none when this page, opened in a tab, shows only its note). */
function rearm(): void {
  const approvals = document.getElementById('approvals');
  if (approvals) armApprovalButtons(approvals);
  armToggles();
}
chrome.windows.onCreated.addListener(uncovered);
// A page's popup (a select's list, a date picker) over the panel went away under the pointer.
watchPointerArrivals(uncovered);
chrome.windows.onRemoved.addListener(uncovered);
chrome.windows.onBoundsChanged.addListener(uncovered);
/**
 * Focus coming to the panel's window from another window of the browser brings the panel's window
 * in front of that one (the agent can focus windows). Focus coming back from outside the browser
 * (the terminal the agent runs in) does not count: the last window of the browser that had focus
 * is then the panel's own (Chrome may report "no window" in between: it is skipped).
 */
let panelWindow: number | undefined;
let lastFocused: number | undefined;
void chrome.windows.getCurrent().then((w) => (panelWindow = lastFocused = w.id));
chrome.windows.onFocusChanged.addListener((id) => {
  if (id === chrome.windows.WINDOW_ID_NONE) return;
  if (id === panelWindow && lastFocused !== undefined && lastFocused !== panelWindow) uncovered();
  lastFocused = id;
});
// The panel resized (its width changed, text wrapped anew): cards and toggles may have moved
// with no render to see it; measured now, a moved one is disabled for its wait rather than
// looking enabled and dropping the click that comes.
window.addEventListener('resize', rearm);
// Shown again: what hid it (a tab in full screen) may have just gone from under the pointer.
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') uncovered();
});

const filterBox = document.getElementById('tool-filter') as HTMLInputElement;
filterBox.addEventListener('input', () => {
  filter = filterBox.value.trim();
  const st = state;
  if (st) section('tool-groups', () => renderToolGroups(st.config, filter, toolActions));
});
// Elapsed times of running calls tick once a second without rebuilding the panel.
setInterval(tickElapsed, 1000);

// The worker accepts only the real side panel; this page opened in a tab says so instead of retrying.
void chrome.tabs.getCurrent().then((tab) => {
  if (!tab) return connect();
  document.getElementById('root')!.textContent = 'Open OpenTabs from its toolbar icon: the side panel does not work in a tab.';
});
