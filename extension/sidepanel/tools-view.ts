/**
 * Permissions you can manage: every tool in a group (one per plugin, then the built-in groups:
 * tabs, windows, reading, acting, …) with a group-level off/ask/auto that sets all of its tools,
 * a filter box, each tool's description on expand, and tools that run code or touch cookies,
 * storage or recorded traffic marked. A plugin's display name and tool descriptions are its
 * package's words: hidden and direction-changing characters show as \uXXXX.
 */
import type { BrowserToolInfo, ConfigState, Permission } from '../../server/protocol/methods.ts';
import { h, permissionSelect, showHidden } from './dom.ts';

export interface ToolActions {
  setTool(plugin: string, tool: string, p: Permission): void;
  setPlugin(plugin: string, p: Permission): void;
  /** Every tool of a built-in group, one after another. */
  setGroup(tools: string[], p: Permission): void;
}

interface Row {
  name: string;
  description: string;
  permission: Permission;
  risk?: string;
  set: (p: Permission) => void;
}

interface Group {
  id: string;
  title: string;
  rows: Row[];
  permission: Permission | 'mixed';
  set: (p: Permission) => void;
  testid: string;
  attrs: Record<string, string>;
}

const GROUP_TITLES: Record<string, string> = {
  tabs: 'Tabs',
  windows: 'Windows',
  reading: 'Reading pages',
  acting: 'Acting on pages',
  console: 'Console',
  network: 'Network',
  storage: 'Cookies and storage',
  data: 'History, bookmarks, downloads, closed tabs',
  extension: 'Extension',
};

/** Tool descriptions the user opened (kept across re-renders). */
const open = new Set<string>();

function common(perms: Permission[]): Permission | 'mixed' {
  return perms.every((p) => p === perms[0]) && perms.length > 0 ? perms[0]! : 'mixed';
}

function groups(cfg: ConfigState, act: ToolActions): Group[] {
  const out: Group[] = [];
  for (const p of cfg.plugins) {
    out.push({
      id: `plugin:${p.name}`,
      title: p.displayName,
      permission: p.permission,
      set: (perm) => act.setPlugin(p.name, perm),
      testid: `perm-plugin-${p.name}`,
      attrs: { 'data-plugin': p.name },
      rows: p.tools.map((t) => ({ name: t.fullName, description: t.description, permission: t.permission, set: (perm) => act.setTool(p.name, t.name, perm) })),
    });
  }
  const byGroup = new Map<string, BrowserToolInfo[]>();
  for (const t of cfg.browserTools) byGroup.set(t.group, [...(byGroup.get(t.group) ?? []), t]);
  for (const [g, tools] of byGroup) {
    out.push({
      id: `browser:${g}`,
      title: GROUP_TITLES[g] ?? g,
      permission: common(tools.map((t) => t.permission)),
      set: (perm) => act.setGroup(tools.map((t) => t.name), perm),
      testid: `perm-group-${g}`,
      attrs: { 'data-group': g },
      rows: tools.map((t) => ({ name: t.name, description: t.description, permission: t.permission, ...(t.risk ? { risk: t.risk } : {}), set: (perm) => act.setTool('browser', t.name, perm) })),
    });
  }
  return out;
}

function toolRow(r: Row): HTMLElement {
  const desc = h('div', { class: 'muted description', 'data-testid': `tool-description-${r.name}`, hidden: !open.has(r.name) }, showHidden(r.description));
  const toggle = h('button', { class: 'link name', 'aria-expanded': String(open.has(r.name)), title: 'Show what it does' }, r.name);
  toggle.addEventListener('click', () => {
    if (open.has(r.name)) open.delete(r.name);
    else open.add(r.name);
    desc.hidden = !open.has(r.name);
    toggle.setAttribute('aria-expanded', String(open.has(r.name)));
  });
  return h(
    'div',
    { class: 'tool', 'data-testid': `tool-row-${r.name}` },
    h('div', { class: 'row' }, toggle, permissionSelect(r.permission, r.set, { 'data-tool': r.name, 'data-testid': `perm-${r.name}` })),
    r.risk ? h('div', { class: 'risk', 'data-testid': `risk-${r.name}` }, `⚠ ${r.risk}`) : null,
    desc,
  );
}

function matches(filter: string, g: Group, r: Row): boolean {
  if (!filter) return true;
  const f = filter.toLowerCase();
  return r.name.toLowerCase().includes(f) || r.description.toLowerCase().includes(f) || g.title.toLowerCase().includes(f) || (r.risk ?? '').toLowerCase().includes(f);
}

/** The tool groups for the current filter. */
export function renderToolGroups(cfg: ConfigState | null, filter: string, act: ToolActions): HTMLElement[] {
  if (!cfg) return [h('div', { class: 'detail' }, 'Connect to the server to see and change tool permissions.')];
  const out: HTMLElement[] = [];
  for (const g of groups(cfg, act)) {
    const rows = g.rows.filter((r) => matches(filter, g, r));
    if (rows.length === 0) continue;
    out.push(
      h(
        'div',
        { class: 'card tool-group', 'data-testid': `tool-group-${g.id}` },
        h(
          'div',
          { class: 'row group-head' },
          h('strong', {}, `${showHidden(g.title)} `, h('span', { class: 'muted' }, `${g.rows.length} tool${g.rows.length === 1 ? '' : 's'}`)),
          permissionSelect(g.permission, g.set, { ...g.attrs, 'data-testid': g.testid, title: 'Set every tool of this group' }),
        ),
        ...rows.map(toolRow),
      ),
    );
  }
  if (out.length === 0) out.push(h('div', { class: 'detail', 'data-testid': 'tool-filter-empty' }, `No tool matches "${filter}".`));
  return out;
}
