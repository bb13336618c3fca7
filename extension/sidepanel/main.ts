/**
 * The side panel: plain DOM, re-rendered from the worker's PanelState on every push. It never
 * talks to the server itself; config.* requests go through the worker, which relays them.
 */
import type { BrowserToolInfo, ConfigState, Permission, PluginInfo } from '../../server/protocol/methods.ts';
import type { ConfigField } from '../../server/plugins/types.ts';
import { PANEL_PORT_NAME, type PanelState, type PanelToWorker, type PendingConfirmation, type WorkerToPanel } from '../shared/panel-protocol.ts';
import { APPROVAL_ARGS_PREVIEW_CHARS } from '../../server/protocol/limits.ts';

const REASONS: Record<string, string> = {
  server_not_running: 'Server not running',
  auth_failed: 'Authentication failed',
  // The server could not prove it knows our secret (rotated secret, or another process on the port).
  server_unverified: 'Authentication failed',
  no_secret: 'Not set up',
  replaced: 'Replaced by another browser',
  closed: 'Disconnected',
};
const PERMISSIONS: Permission[] = ['off', 'ask', 'auto'];

let port: chrome.runtime.Port;
let state: PanelState | null = null;
let nextId = 1;
const waiting = new Map<number, (r: Extract<WorkerToPanel, { type: 'response' }>) => void>();
let lastError: string | null = null;

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

async function request(method: string, params: unknown): Promise<void> {
  const id = nextId++;
  const res = await new Promise<Extract<WorkerToPanel, { type: 'response' }>>((resolve) => {
    waiting.set(id, resolve);
    send({ type: 'request', id, method, params });
  });
  lastError = res.ok ? null : `${method}: ${res.error}`;
  render();
}

type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>;
function h(tag: string, attrs: Attrs = {}, ...children: Array<Node | string | null | false | undefined>): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  for (const c of children) if (c !== null && c !== false && c !== undefined) el.append(c);
  return el;
}

function permissionSelect(value: Permission, onChange: (p: Permission) => void, attrs: Attrs): HTMLElement {
  const sel = h('select', { ...attrs, 'aria-label': `Permission for ${attrs['data-tool'] ?? attrs['data-plugin'] ?? ''}` }, ...PERMISSIONS.map((p) => h('option', { value: p, selected: p === value }, p)));
  sel.addEventListener('change', () => onChange((sel as HTMLSelectElement).value as Permission));
  return sel;
}

function settingsForm(p: PluginInfo): HTMLElement | null {
  const schema = p.configSchema as Record<string, ConfigField> | undefined;
  if (!schema || Object.keys(schema).length === 0) return null;
  const form = h('form', { 'data-settings': p.name });
  for (const [key, f] of Object.entries(schema)) {
    const cur = p.settings[key] ?? f.default ?? '';
    let input: HTMLElement;
    if (f.type === 'boolean') input = h('input', { type: 'checkbox', name: key, checked: cur === true });
    else if (f.type === 'select') input = h('select', { name: key }, ...(f.options ?? []).map((o) => h('option', { value: o, selected: o === cur }, o)));
    else input = h('input', { type: f.type === 'number' ? 'number' : 'text', name: key, value: String(cur), placeholder: f.type === 'url' ? 'https://…' : undefined, required: f.required });
    form.append(h('label', {}, `${f.label ?? key}${f.required ? ' *' : ''}`, input, f.description ? h('div', { class: 'muted' }, f.description) : null));
  }
  form.append(h('button', { type: 'submit', class: 'primary' }, 'Save settings'));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const settings: Record<string, unknown> = {};
    for (const [key, f] of Object.entries(schema)) {
      const el = form.querySelector(`[name="${CSS.escape(key)}"]`) as HTMLInputElement | HTMLSelectElement;
      if (f.type === 'boolean') settings[key] = (el as HTMLInputElement).checked;
      else if (f.type === 'number') {
        if (el.value !== '') settings[key] = Number(el.value);
      } else if (el.value !== '') settings[key] = el.value;
    }
    void request('config.setPluginSettings', { plugin: p.name, settings });
  });
  return form;
}

/**
 * The top of an approval card: what the call touches — tool, plugin, tab, page URL and domain —
 * before any argument, so a long argument list cannot push it out of sight.
 */
function approvalTarget(p: PendingConfirmation): HTMLElement {
  const t = p.target ?? {};
  const lines: HTMLElement[] = [
    h('div', { class: 'row' }, h('strong', { class: 'name', 'data-testid': 'approval-tool' }, p.tool), h('span', { class: 'muted', 'data-testid': 'approval-plugin' }, p.plugin === 'browser' ? 'built-in' : `plugin ${p.plugin}`)),
  ];
  if (t.domain) lines.push(h('div', { class: 'domain', 'data-testid': 'approval-domain' }, t.domain));
  if (t.url) lines.push(h('div', { class: 'url', 'data-testid': 'approval-url', title: t.url }, t.url));
  if (t.tabId !== undefined) lines.push(h('div', { class: 'muted', 'data-testid': 'approval-tab' }, `Tab ${t.tabId}`));
  if (t.candidateTabs?.length) {
    lines.push(h('div', { class: 'muted' }, 'Runs in one of these tabs:'));
    for (const c of t.candidateTabs) lines.push(h('div', { class: 'url', 'data-testid': 'approval-candidate', title: c.url }, `Tab ${c.tabId}: ${c.url}`));
  }
  if (!t.url && t.tabId === undefined && !t.candidateTabs?.length) lines.push(h('div', { class: 'muted', 'data-testid': 'approval-no-target' }, 'No tab named: the tool picks one (e.g. the active tab)'));
  return h('div', { class: 'target', 'data-testid': 'approval-target' }, ...lines);
}

/** The call's arguments, cut at APPROVAL_ARGS_PREVIEW_CHARS with a mark saying how much is hidden. */
function approvalArgs(params: unknown): HTMLElement[] {
  const text = JSON.stringify(params, null, 1) ?? 'null';
  if (text.length <= APPROVAL_ARGS_PREVIEW_CHARS) return [h('pre', { 'data-testid': 'approval-args' }, text)];
  const more = text.length - APPROVAL_ARGS_PREVIEW_CHARS;
  return [
    h('pre', { 'data-testid': 'approval-args' }, text.slice(0, APPROVAL_ARGS_PREVIEW_CHARS)),
    h('div', { class: 'truncated', 'data-testid': 'approval-truncated' }, `… ${more.toLocaleString('en-US')} more character${more === 1 ? '' : 's'} not shown`),
  ];
}

function render(): void {
  if (!state) return;
  // Don't yank a settings field from under the user's cursor; render when they leave it.
  if (document.activeElement instanceof HTMLInputElement && document.activeElement.closest('form')) {
    document.activeElement.addEventListener('blur', () => render(), { once: true });
    return;
  }
  const c = state.connection;
  const pill = document.getElementById('conn')!;
  pill.dataset.status = c.status;
  // data-state: connected | connecting | <DisconnectReason> (what the e2e tests read).
  pill.dataset.state = c.status === 'disconnected' ? (c.reason ?? 'closed') : c.status;
  pill.textContent = c.status === 'connected' ? `Connected :${c.port}` : c.status === 'connecting' ? 'Connecting…' : (REASONS[c.reason ?? ''] ?? 'Disconnected');
  const detail = document.getElementById('conn-detail')!;
  detail.hidden = !c.detail;
  detail.textContent = c.detail ?? '';

  const root = document.getElementById('root')!;
  const parts: HTMLElement[] = [];
  if (lastError) parts.push(h('div', { class: 'card error', id: 'last-error' }, lastError));

  if (state.pending.length) {
    parts.push(h('h2', {}, `Waiting for approval (${state.pending.length})`));
    for (const p of state.pending) {
      const decide = (decision: 'allow' | 'deny', alwaysAllow?: boolean) => () => send({ type: 'confirm', id: p.id, decision, alwaysAllow });
      parts.push(
        h(
          'div',
          { class: 'card approval', 'data-confirmation': p.id, 'data-testid': `confirm-${p.tool}` },
          approvalTarget(p),
          ...approvalArgs(p.params),
          h(
            'div',
            { class: 'buttons' },
            h('button', { class: 'primary', 'data-action': 'allow', 'data-testid': 'allow', onclick: decide('allow') }, approvalLabels(p.plugin).allow),
            h('button', { class: 'danger', 'data-action': 'deny', 'data-testid': 'deny', onclick: decide('deny') }, 'Deny'),
            h('button', { 'data-action': 'always', 'data-testid': 'always-allow', onclick: decide('allow', true) }, approvalLabels(p.plugin).always),
          ),
        ),
      );
    }
  }

  if (state.running.length) parts.push(h('div', { class: 'detail running' }, `Running: ${state.running.map((r) => r.tool).join(', ')}`));

  const cfg = state.config;
  const pluginList = cfg?.plugins ?? state.plugins;
  parts.push(h('h2', {}, `Plugins (${pluginList.length})`));
  if (pluginList.length === 0) parts.push(h('div', { class: 'detail' }, 'No plugins installed. Try `opentabs plugin search`.'));
  for (const p of pluginList) {
    const tabState = state.plugins.find((x) => x.name === p.name)?.tabState ?? 'closed';
    const card = h(
      'div',
      { class: 'card', 'data-plugin-card': p.name, 'data-testid': `plugin-${p.name}` },
      h(
        'div',
        { class: 'row' },
        h('strong', {}, `${p.displayName} `, h('span', { class: 'muted' }, `v${p.version}`)),
        h('span', { class: 'state', 'data-state': tabState, 'data-testid': `tab-state-${p.name}`, title: 'Tab state' }, tabState),
      ),
      p.broadPatterns?.length
        ? h('div', { class: 'warning', 'data-testid': `broad-warning-${p.name}`, title: p.broadPatterns.join(', ') }, `⚠ Runs on every site (${p.broadPatterns.join(', ')}): its code runs in every page it matches while any of its tools is on.`)
        : null,
      p.broadConsent === false
        ? h('div', { class: 'warning', 'data-testid': `broad-no-consent-${p.name}` }, `Not running: it covers every site and you have not allowed that. To allow it: opentabs plugin ${p.source === 'npm' ? 'install' : 'add'} … --allow-broad-patterns`)
        : p.enabled === false
          ? h('div', { class: 'muted', 'data-testid': `disabled-${p.name}` }, 'All tools off: it does not run in any page.')
          : null,
      h(
        'div',
        { class: 'row' },
        h('span', { class: 'muted' }, 'All tools'),
        permissionSelect(p.permission, (perm) => void request('config.setPluginPermission', { plugin: p.name, permission: perm }), { 'data-plugin': p.name, 'data-testid': `perm-plugin-${p.name}` }),
      ),
      ...p.tools.map((t) =>
        h(
          'div',
          { class: 'row' },
          h('span', { class: 'name', title: t.description }, t.fullName),
          permissionSelect(t.permission, (perm) => void request('config.setToolPermission', { plugin: p.name, tool: t.name, permission: perm }), { 'data-tool': t.fullName, 'data-testid': `perm-${t.fullName}` }),
        ),
      ),
    );
    const form = settingsForm(p);
    if (form) card.append(form);
    parts.push(card);
  }

  if (cfg?.failedPlugins.length) {
    parts.push(h('h2', {}, 'Failed to load'));
    for (const f of cfg.failedPlugins) parts.push(h('div', { class: 'card', 'data-failed': f.name ?? f.path, 'data-testid': 'failed-plugin' }, h('strong', {}, f.name ?? f.path), h('div', { class: 'error' }, f.error)));
  }

  parts.push(...pageToolsSection(cfg?.pageOrigins ?? []));

  const browserTools: BrowserToolInfo[] = cfg?.browserTools ?? [];
  if (browserTools.length) {
    parts.push(h('h2', {}, `Browser tools (${browserTools.length})`));
    const card = h('div', { class: 'card' });
    let group = '';
    for (const t of browserTools) {
      if (t.group !== group) {
        group = t.group;
        card.append(h('div', { class: 'group' }, group));
      }
      card.append(
        h(
          'div',
          { class: 'row' },
          h('span', { class: 'name', title: t.description }, t.name),
          permissionSelect(t.permission, (perm) => void request('config.setToolPermission', { plugin: 'browser', tool: t.name, permission: perm }), { 'data-tool': t.name, 'data-testid': `perm-${t.name}` }),
        ),
      );
    }
    parts.push(card);
  }
  if (cfg) {
    const box = h('input', { type: 'checkbox', 'data-testid': 'skip-permissions', checked: cfg.skipPermissions }) as HTMLInputElement;
    box.addEventListener('change', () => void request('config.setSkipPermissions', { skip: box.checked }));
    parts.push(
      h(
        'label',
        { class: 'detail toggle', title: '"ask" tools run without asking; "off" tools stay off' },
        box,
        ' Skip approvals (run "ask" tools without asking)',
      ),
    );
  }
  if (cfg) {
    const files = h('input', { type: 'checkbox', 'data-testid': 'allow-file-urls', checked: cfg.allowFileUrls === true }) as HTMLInputElement;
    files.addEventListener('change', () => void request('config.setAllowFileUrls', { allow: files.checked }));
    parts.push(
      h('label', { class: 'detail toggle', title: 'Never the OpenTabs config folder, which holds the secret' }, files, ' Let tools open and read file:// pages'),
    );
  }
  if (state.configError) parts.push(h('div', { class: 'detail error' }, state.configError));
  root.replaceChildren(...parts);
}

// The worker accepts only the real side panel; this page opened in a tab says so instead of retrying.
void chrome.tabs.getCurrent().then((tab) => {
  if (!tab) return connect();
  document.getElementById('root')!.textContent = 'Open OpenTabs from its toolbar icon: the side panel does not work in a tab.';
});

/**
 * Button labels of an approval card. A page tool (WebMCP, plugin "page:<origin>") is permitted
 * per origin: "Always allow" stores `auto` for every tool of that origin, and the card says so.
 */
function approvalLabels(plugin: string): { allow: string; always: string } {
  if (plugin.startsWith('page:')) return { allow: 'Allow once', always: `Always allow ${plugin.slice('page:'.length)}` };
  return { allow: 'Allow', always: 'Always allow' };
}

/**
 * Page tools (WebMCP) grouped by origin: one permission per origin (what "Always allow" on a page
 * tool's approval card stores) and the tabs offering tools now, with the tools' names.
 */
function pageToolsSection(origins: NonNullable<ConfigState['pageOrigins']>): HTMLElement[] {
  if (origins.length === 0) return [];
  const out: HTMLElement[] = [h('h2', {}, `Page tools (${origins.length} site${origins.length === 1 ? '' : 's'})`)];
  for (const o of origins) {
    const card = h(
      'div',
      { class: 'card', 'data-testid': `page-origin-${o.origin}` },
      h(
        'div',
        { class: 'row' },
        h('strong', { title: 'Tools this site registered in its own pages (WebMCP); they run the site\'s code' }, o.origin),
        permissionSelect(o.permission, (perm) => void request('config.setOriginPermission', { origin: o.origin, permission: perm }), { 'data-testid': `perm-origin-${o.origin}` }),
      ),
    );
    if (o.tabs.length === 0) card.append(h('div', { class: 'muted' }, 'No open tab offers tools now.'));
    for (const t of o.tabs) card.append(h('div', { class: 'detail', title: t.url }, `Tab ${t.tabId}: ${t.tools.join(', ')}`));
    out.push(card);
  }
  return out;
}
