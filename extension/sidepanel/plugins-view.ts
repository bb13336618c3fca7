/**
 * Plugins: each with its version, tab state (is the app open and ready?), warnings (runs on every
 * site, not allowed, all tools off) and its settings form; page tools (WebMCP) by origin. Tool
 * permissions are in the Tools section (tools-view.ts). What a plugin package says of itself
 * (display name, version, labels, its module's error) and its tabs' titles show hidden and
 * direction-changing characters as \uXXXX.
 */
import type { ConfigState, PluginInfo, TabState } from '../../server/protocol/methods.ts';
import type { ConfigField } from '../../plugins/sdk/define.ts';
import { h, permissionSelect, showHidden } from './dom.ts';
import type { Permission } from '../../server/protocol/methods.ts';

function settingsForm(p: PluginInfo, save: (plugin: string, settings: Record<string, unknown>) => void): HTMLElement | null {
  const schema = p.configSchema as Record<string, ConfigField> | undefined;
  if (!schema || Object.keys(schema).length === 0) return null;
  const form = h('form', { 'data-settings': p.name });
  for (const [key, f] of Object.entries(schema)) {
    const cur = p.settings[key] ?? f.default ?? '';
    let input: HTMLElement;
    if (f.type === 'boolean') input = h('input', { type: 'checkbox', name: key, checked: cur === true });
    else if (f.type === 'select') input = h('select', { name: key }, ...(f.options ?? []).map((o) => h('option', { value: o, selected: o === cur }, showHidden(o))));
    else input = h('input', { type: f.type === 'number' ? 'number' : 'text', name: key, value: String(cur), placeholder: f.type === 'url' ? 'https://…' : undefined, required: f.required });
    form.append(h('label', {}, `${showHidden(f.label ?? key)}${f.required ? ' *' : ''}`, input, f.description ? h('div', { class: 'muted' }, showHidden(f.description)) : null));
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
    save(p.name, settings);
  });
  return form;
}

export function renderPlugins(
  list: PluginInfo[],
  tabStateOf: (name: string) => TabState,
  busyTabs: Set<number>,
  tabsOf: (name: string) => { tabId: number; url: string; title: string; loadError?: string }[],
  save: (plugin: string, settings: Record<string, unknown>) => void,
): HTMLElement[] {
  const out: HTMLElement[] = [h('h2', {}, `Plugins (${list.length})`)];
  if (list.length === 0) out.push(h('div', { class: 'detail' }, 'No plugins yet: a plugin gives the agent tools for one web app (see "Writing a plugin" in the OpenTabs README).'));
  for (const p of list) {
    const tabState = tabStateOf(p.name);
    const tabs = tabsOf(p.name);
    const card = h(
      'div',
      { class: 'card', 'data-plugin-card': p.name, 'data-testid': `plugin-${p.name}` },
      h(
        'div',
        { class: 'row' },
        h('strong', {}, `${showHidden(p.displayName)} `, h('span', { class: 'muted' }, `v${showHidden(p.version)}`)),
        h('span', { class: 'state', 'data-state': tabState, 'data-testid': `tab-state-${p.name}`, title: 'Tab state' }, tabState),
      ),
      ...tabs.map((t) =>
        h('div', { class: `muted tab${busyTabs.has(t.tabId) ? ' busy' : ''}`, 'data-testid': `plugin-tab-${t.tabId}`, 'data-busy': busyTabs.has(t.tabId), title: t.url }, `${busyTabs.has(t.tabId) ? '● ' : ''}${showHidden(t.title || t.url)}`),
      ),
      // The plugin's module threw in that page: the author's error, where they look first.
      ...tabs
        .filter((t) => t.loadError !== undefined)
        .map((t) => h('div', { class: 'warning', 'data-testid': `load-error-${p.name}-${t.tabId}` }, `Failed to load in tab ${t.tabId}: ${showHidden(t.loadError ?? '')}`)),
      p.broadPatterns?.length
        ? h('div', { class: 'warning', 'data-testid': `broad-warning-${p.name}`, title: p.broadPatterns.join(', ') }, `⚠ Runs on every site (${p.broadPatterns.join(', ')}): its code runs in every page it matches while any of its tools is on.`)
        : null,
      p.broadConsent === false
        ? h('div', { class: 'warning', 'data-testid': `broad-no-consent-${p.name}` }, `Not running: it covers every site and you have not allowed that. To allow it: opentabs plugin ${p.source === 'npm' ? 'install' : 'add'} … --allow-broad-patterns`)
        : p.enabled === false
          ? h('div', { class: 'muted', 'data-testid': `disabled-${p.name}` }, 'All tools off: it does not run in any page.')
          : null,
    );
    const form = settingsForm(p, save);
    if (form) card.append(form);
    out.push(card);
  }
  return out;
}

/** Page tools (WebMCP) grouped by origin: one permission per origin and the tabs offering tools now. */
export function renderPageOrigins(origins: NonNullable<ConfigState['pageOrigins']>, setOrigin: (origin: string, p: Permission) => void): HTMLElement[] {
  if (origins.length === 0) return [];
  const out: HTMLElement[] = [h('h2', {}, `Page tools (${origins.length} site${origins.length === 1 ? '' : 's'})`)];
  for (const o of origins) {
    const card = h(
      'div',
      { class: 'card', 'data-testid': `page-origin-${o.origin}` },
      h(
        'div',
        { class: 'row' },
        h('strong', { title: "Tools this site registered in its own pages (WebMCP); they run the site's code" }, o.origin),
        permissionSelect(o.permission, (perm) => setOrigin(o.origin, perm), { 'data-testid': `perm-origin-${o.origin}` }),
      ),
    );
    if (o.tabs.length === 0) card.append(h('div', { class: 'muted' }, 'No open tab offers tools now.'));
    for (const t of o.tabs) card.append(h('div', { class: 'detail', title: t.url }, `Tab ${t.tabId}: ${t.tools.join(', ')}`));
    out.push(card);
  }
  return out;
}
