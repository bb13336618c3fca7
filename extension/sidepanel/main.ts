/**
 * The side panel: plain DOM, re-rendered from the worker's PanelState on every push. It never
 * talks to the server itself; config.* requests and Stop go through the worker, which accepts them
 * only from the real side panel. Sections: header (connection), activity (running calls, recent
 * ones), approvals, plugins, tools with their permissions (filterable), settings.
 */
import type { Permission } from '../../server/protocol/methods.ts';
import { PANEL_PORT_NAME, type PanelState, type PanelToWorker, type WorkerToPanel } from '../shared/panel-protocol.ts';
import { renderActivity, tickElapsed } from './activity-view.ts';
import { renderApprovals } from './approvals.ts';
import { h } from './dom.ts';
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

function section(id: string, children: HTMLElement[]): void {
  document.getElementById(id)!.replaceChildren(...children);
}

async function recordActiveTab(start: boolean, tabId?: number): Promise<void> {
  const w = await chrome.windows.getCurrent();
  send({ type: 'record', windowId: w.id!, start, ...(tabId !== undefined ? { tabId } : {}) });
}

function settingsToggles(): HTMLElement[] {
  const cfg = state?.config;
  if (!cfg) return [];
  const box = h('input', { type: 'checkbox', 'data-testid': 'skip-permissions', checked: cfg.skipPermissions }) as HTMLInputElement;
  box.addEventListener('change', () => void request('config.setSkipPermissions', { skip: box.checked }));
  const files = h('input', { type: 'checkbox', 'data-testid': 'allow-file-urls', checked: cfg.allowFileUrls === true }) as HTMLInputElement;
  files.addEventListener('change', () => void request('config.setAllowFileUrls', { allow: files.checked }));
  return [
    h('h2', {}, 'Settings'),
    h('label', { class: 'detail toggle', title: '"ask" tools run without asking; "off" tools stay off' }, box, ' Skip approvals (run "ask" tools without asking)'),
    h('label', { class: 'detail toggle', title: 'Never the OpenTabs config folder, which holds the secret' }, files, ' Let tools open and read file:// pages'),
  ];
}

/** The settings form whose re-render waits for focus to leave it (see render). */
let formInUse: HTMLFormElement | null = null;
/** A pointer button is down: a click is under way, which a rebuild before its release would swallow. */
let pointerDown = false;
document.addEventListener('pointerdown', () => (pointerDown = true), true);
document.addEventListener('pointerup', () => (pointerDown = false), true);

/** Render the plugins section again once focus leaves `form` (not when it moves inside it, e.g. to Save). */
function renderPluginsWhenLeft(form: HTMLFormElement): void {
  if (formInUse === form) return;
  formInUse = form;
  const onOut = (e: FocusEvent) => {
    if (e.relatedTarget instanceof Node && form.contains(e.relatedTarget)) return;
    form.removeEventListener('focusout', onOut);
    formInUse = null;
    // Rebuild after any click under way has completed (and submitted), never between its press
    // and its release (where focus may leave the form first, as on a button that takes no focus).
    if (pointerDown) document.addEventListener('pointerup', () => setTimeout(render, 0), { once: true, capture: true });
    else setTimeout(render, 0);
  };
  form.addEventListener('focusout', onOut);
}

function render(): void {
  if (!state) return;
  const cfg = state.config;
  renderHeader(state.connection, cfg);
  const errors: HTMLElement[] = [];
  if (lastError) errors.push(h('div', { class: 'card error', id: 'last-error' }, lastError));
  if (state.configError) errors.push(h('div', { class: 'detail error' }, state.configError));
  section('errors', errors);
  section('activity', renderActivity(state.running, state.history, (dispatchId) => send({ type: 'stop', dispatchId })));
  section('approvals', renderApprovals(state.pending, (id, decision, alwaysAllow) => send({ type: 'confirm', id, decision, alwaysAllow })));
  const busy = new Set(state.running.map((c) => c.tabId).filter((t): t is number => t !== undefined));
  const byName = new Map(state.plugins.map((p) => [p.name, p]));
  // A settings form in use (focus on a field or on its Save button) is left as it is while the
  // rest of the panel stays live: rebuilding it would drop what the user typed, and a rebuild
  // between pressing and releasing Save would swallow the click. Calls running in the meantime
  // update the panel all the time, so this is the common case, not a corner.
  const editing = document.activeElement instanceof Element ? document.activeElement.closest<HTMLFormElement>('form[data-settings]') : null;
  if (editing) renderPluginsWhenLeft(editing);
  else section(
    'plugins',
    renderPlugins(
      cfg?.plugins ?? state.plugins,
      (name) => byName.get(name)?.tabState ?? 'closed',
      busy,
      (name) => byName.get(name)?.tabs ?? [],
      (plugin, settings) => void request('config.setPluginSettings', { plugin, settings }),
    ),
  );
  if (!editing && cfg?.failedPlugins.length) {
    document.getElementById('plugins')!.append(
      h('h2', {}, 'Failed to load'),
      ...cfg.failedPlugins.map((f) => h('div', { class: 'card', 'data-failed': f.name ?? f.path, 'data-testid': 'failed-plugin' }, h('strong', {}, f.name ?? f.path), h('div', { class: 'error' }, f.error))),
    );
  }
  section(
    'record',
    state.connection.status === 'connected'
      ? renderRecording(state.recording, state.recordError, state.connection.cli ?? 'opentabs', () => void recordActiveTab(true), (tabId) => void recordActiveTab(false, tabId))
      : [],
  );
  section('page-tools', renderPageOrigins(cfg?.pageOrigins ?? [], (origin, permission: Permission) => void request('config.setOriginPermission', { origin, permission })));
  section('tool-groups', renderToolGroups(cfg, filter, toolActions));
  section('settings', settingsToggles());
}

const filterBox = document.getElementById('tool-filter') as HTMLInputElement;
filterBox.addEventListener('input', () => {
  filter = filterBox.value.trim();
  if (state) section('tool-groups', renderToolGroups(state.config, filter, toolActions));
});
// Elapsed times of running calls tick once a second without rebuilding the panel.
setInterval(tickElapsed, 1000);

// The worker accepts only the real side panel; this page opened in a tab says so instead of retrying.
void chrome.tabs.getCurrent().then((tab) => {
  if (!tab) return connect();
  document.getElementById('root')!.textContent = 'Open OpenTabs from its toolbar icon: the side panel does not work in a tab.';
});
