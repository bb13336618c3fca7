/**
 * The side panel: plain DOM, re-rendered from the ViewState the service worker pushes on every
 * change. Permission and settings changes are `config.*` requests the worker relays to the
 * server; approvals go back as confirmation.response. Also works opened as a normal tab
 * (chrome-extension://<id>/sidepanel.html), which the e2e tests use.
 */
import type { Permission } from '../../server/protocol/methods.ts';
import type { ViewState } from '../background/state.ts';
import { SIDEPANEL_PORT_NAME, type PanelToWorker, type WorkerToPanel } from '../shared/sidepanel-messages.ts';

const PERMISSIONS: Permission[] = ['off', 'ask', 'auto'];
const CONNECTION_LABEL: Record<string, string> = {
  connected: 'Connected',
  connecting: 'Connecting…',
  server_not_running: 'Server not running',
  auth_failed: 'Authentication failed',
  not_installed: 'Not set up',
  replaced: 'Replaced by another connection',
  disconnected: 'Disconnected',
};

let port: chrome.runtime.Port;
let nextId = 1;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
let state: ViewState | null = null;
/** Settings forms survive re-renders while their plugin's schema and saved values are unchanged. */
const settingsForms = new Map<string, { key: string; el: HTMLElement }>();

function connectPort(): void {
  port = chrome.runtime.connect({ name: SIDEPANEL_PORT_NAME });
  port.onMessage.addListener((msg: WorkerToPanel) => {
    if (msg.type === 'state') {
      state = msg.state;
      render();
    } else if (msg.type === 'response') {
      const w = waiting.get(msg.id);
      if (!w) return;
      waiting.delete(msg.id);
      if (msg.ok) w.resolve(msg.result);
      else w.reject(new Error(msg.error));
    }
  });
  // The worker may be restarted by Chrome; reconnect so the panel keeps updating.
  port.onDisconnect.addListener(() => setTimeout(connectPort, 200));
}

function send(msg: PanelToWorker): void {
  port.postMessage(msg);
}

function request(method: string, params: unknown): Promise<unknown> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    send({ type: 'request', id, method: method as 'config.getState', params });
  });
}

function notice(text: string, isError = false): void {
  const el = document.getElementById('notice')!;
  el.textContent = text;
  el.className = isError ? 'error' : '';
  el.hidden = false;
}

async function act(what: string, method: string, params: unknown): Promise<void> {
  try {
    await request(method, params);
    notice(`${what}: saved`);
  } catch (err) {
    notice(`${what}: ${(err as Error).message}`, true);
  }
}

// ------------------------------------------------------------------ tiny DOM helper

type Child = Node | string | null | undefined | false;
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, unknown> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, val] of Object.entries(attrs)) {
    if (val === undefined || val === null || val === false) continue;
    if (k.startsWith('on') && typeof val === 'function') el.addEventListener(k.slice(2), val as EventListener);
    else if (k === 'className') el.className = String(val);
    else if (k in el && k !== 'list') (el as unknown as Record<string, unknown>)[k] = val;
    else el.setAttribute(k, String(val));
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

function permissionSelect(current: Permission, testid: string, onChange: (p: Permission) => void): HTMLSelectElement {
  const sel = h('select', { 'data-testid': testid, 'aria-label': testid, onchange: () => onChange(sel.value as Permission) }, ...PERMISSIONS.map((p) => h('option', { value: p, selected: p === current }, p)));
  return sel;
}

// ------------------------------------------------------------------ sections

function renderConnection(s: ViewState): void {
  const el = document.getElementById('conn')!;
  el.className = s.connection.state;
  el.dataset.state = s.connection.state;
  el.replaceChildren(
    h('span', { className: 'dot' }),
    h('span', { className: 'label' }, CONNECTION_LABEL[s.connection.state] ?? s.connection.state),
    h('span', { className: 'muted' }, s.serverVersion ? `server ${s.serverVersion}` : '', s.connection.port ? ` · port ${s.connection.port}` : ''),
    s.connection.state === 'connected' ? '' : h('button', { onclick: () => send({ type: 'reconnect' }) }, 'Reconnect'),
    s.connection.reason ? h('span', { className: 'reason', 'data-testid': 'connection-reason' }, s.connection.reason) : '',
  );
}

function renderPending(s: ViewState): HTMLElement | null {
  if (s.pending.length === 0) return null;
  return h(
    'section',
    { 'data-testid': 'pending' },
    h('h2', {}, `Waiting for your approval (${s.pending.length})`),
    ...s.pending.map((c) => {
      const decide = (decision: 'allow' | 'deny', alwaysAllow?: boolean) => send({ type: 'confirm', id: c.id, decision, ...(alwaysAllow ? { alwaysAllow } : {}) });
      return h(
        'div',
        { className: 'card pending', 'data-testid': `confirm-${c.tool}`, 'data-id': c.id },
        h('div', { className: 'row' }, h('span', { className: 'title' }, c.tool), h('span', { className: 'muted' }, c.plugin)),
        h('pre', {}, JSON.stringify(c.params, null, 2)),
        h(
          'div',
          { className: 'actions' },
          h('button', { className: 'allow', 'data-testid': 'allow', onclick: () => decide('allow') }, 'Allow'),
          h('button', { className: 'deny', 'data-testid': 'deny', onclick: () => decide('deny') }, 'Deny'),
          h('button', { 'data-testid': 'always-allow', onclick: () => decide('allow', true) }, 'Always allow'),
        ),
      );
    }),
  );
}

interface SchemaProp {
  type?: string;
  enum?: unknown[];
  description?: string;
  title?: string;
  default?: unknown;
}

function settingsForm(p: ViewState['plugins'][number]): HTMLElement | null {
  const schema = p.configSchema as { properties?: Record<string, SchemaProp>; required?: string[] } | undefined;
  const props = schema?.properties ?? (schema && !('type' in schema) ? (schema as Record<string, SchemaProp>) : undefined);
  if (!props || Object.keys(props).length === 0) return null;
  const key = JSON.stringify([props, p.settings]);
  const cached = settingsForms.get(p.name);
  if (cached && cached.key === key) return cached.el;
  const fields = Object.entries(props).map(([name, prop]) => {
    const value = p.settings[name] ?? prop.default;
    const id = `set-${p.name}-${name}`;
    let input: HTMLElement;
    if (prop.enum) input = h('select', { id, name }, ...prop.enum.map((e) => h('option', { value: String(e), selected: e === value }, String(e))));
    else if (prop.type === 'boolean') input = h('input', { id, name, type: 'checkbox', checked: value === true });
    else if (prop.type === 'number' || prop.type === 'integer') input = h('input', { id, name, type: 'number', value: value === undefined ? '' : String(value), step: prop.type === 'integer' ? '1' : 'any' });
    else input = h('input', { id, name, type: 'text', value: value === undefined ? '' : String(value) });
    return h('div', {}, h('label', { htmlFor: id }, prop.title ?? name, prop.description ? h('span', { className: 'muted' }, ` — ${prop.description}`) : null), input);
  });
  const form = h('form', { className: 'settings', 'data-testid': `settings-${p.name}` }, ...fields, h('div', { className: 'actions' }, h('button', { type: 'submit' }, 'Save settings')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const settings: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries(props)) {
      const el = form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement;
      if (prop.type === 'boolean') settings[name] = (el as HTMLInputElement).checked;
      else if (el.value === '') continue;
      else if (prop.type === 'number' || prop.type === 'integer') settings[name] = Number(el.value);
      else settings[name] = el.value;
    }
    void act(`${p.displayName} settings`, 'config.setPluginSettings', { plugin: p.name, settings });
  });
  const el = h('details', {}, h('summary', {}, 'Settings'), form);
  settingsForms.set(p.name, { key, el });
  return el;
}

function renderPlugins(s: ViewState): HTMLElement {
  const running = new Set(s.invocations.map((i) => i.tool));
  return h(
    'section',
    { 'data-testid': 'plugins' },
    h('h2', {}, `Plugins (${s.plugins.length})`),
    s.plugins.length === 0 ? h('p', { className: 'muted' }, 'No plugins installed. `opentabs plugin install <name>` adds one.') : null,
    ...s.plugins.map((p) =>
      h(
        'div',
        { className: 'card', 'data-testid': `plugin-${p.name}` },
        h(
          'div',
          { className: 'row' },
          h('span', { className: 'title name' }, p.displayName, h('span', { className: 'muted' }, ` v${p.version}`)),
          h('span', { className: `badge ${p.tabState.state}`, 'data-testid': 'tab-state' }, p.tabState.state),
        ),
        p.tabState.tabs.length > 0 ? h('div', { className: 'muted' }, p.tabState.tabs.map((t) => `#${t.tabId} ${t.title || t.url}`).join(' · ')) : null,
        h('div', { className: 'row' }, h('span', { className: 'muted' }, 'All tools'), permissionSelect(p.permission, `perm-plugin-${p.name}`, (perm) => void act(p.displayName, 'config.setPluginPermission', { plugin: p.name, permission: perm }))),
        ...p.tools.map((t) =>
          h(
            'div',
            { className: 'row', title: t.description },
            h('span', { className: 'name' }, t.name, running.has(t.fullName) ? h('span', { className: 'badge running' }, ' running') : null),
            permissionSelect(t.permission, `perm-${t.fullName}`, (perm) => void act(t.fullName, 'config.setToolPermission', { plugin: p.name, tool: t.name, permission: perm })),
          ),
        ),
        settingsForm(p),
      ),
    ),
  );
}

function renderFailed(s: ViewState): HTMLElement | null {
  if (s.failedPlugins.length === 0) return null;
  return h(
    'section',
    { 'data-testid': 'failed-plugins' },
    h('h2', {}, `Failed to load (${s.failedPlugins.length})`),
    ...s.failedPlugins.map((f) => h('div', { className: 'card failed' }, h('div', { className: 'title' }, f.name ?? f.path), h('div', { className: 'muted' }, f.path), h('div', {}, f.error))),
  );
}

function renderBrowserTools(s: ViewState): HTMLElement {
  const running = new Set(s.invocations.map((i) => i.tool));
  return h(
    'section',
    { 'data-testid': 'browser-tools' },
    h('h2', {}, `Browser tools (${s.browserTools.length})`),
    h(
      'div',
      { className: 'card' },
      h(
        'div',
        { className: 'row' },
        h('label', { htmlFor: 'skip' }, 'Skip approvals (ask → auto)'),
        h('input', { id: 'skip', type: 'checkbox', checked: s.skipPermissions, 'data-testid': 'skip-permissions', onchange: (e: Event) => void act('Skip approvals', 'config.setSkipPermissions', { skip: (e.target as HTMLInputElement).checked }) }),
      ),
      ...s.browserTools.map((t) =>
        h(
          'div',
          { className: 'row', title: t.description },
          h('span', { className: 'name' }, t.name, running.has(t.name) ? h('span', { className: 'badge running' }, ' running') : null),
          permissionSelect(t.permission, `perm-${t.name}`, (perm) => void act(t.name, 'config.setToolPermission', { plugin: 'browser', tool: t.name, permission: perm })),
        ),
      ),
    ),
  );
}

function render(): void {
  if (!state) return;
  renderConnection(state);
  const root = document.getElementById('root')!;
  // Keep the focused control (e.g. an open select) from being replaced under the user's hand.
  const focused = document.activeElement;
  if (focused && focused !== document.body && root.contains(focused) && focused.tagName === 'INPUT' && (focused as HTMLInputElement).type !== 'checkbox') return;
  root.replaceChildren(...[renderPending(state), renderPlugins(state), renderFailed(state), renderBrowserTools(state)].filter((x): x is HTMLElement => x !== null));
  document.body.dataset.ready = 'true';
}

connectPort();
