/**
 * The handler table for every extension → server method (server/protocol/methods.ts
 * ExtensionToServer), typed from the schemas: a missing method or a wrong params type fails tsc.
 * The RPC peer (server/protocol/rpc-peer.ts) checks params against their valibot schema before a
 * handler runs. Requests return their result or throw an OpenTabsError (sent back as a JSON-RPC
 * error with the error body as `data`).
 */
import { readlinkSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, parse, resolve, sep } from 'node:path';
import { OpenTabsError } from '../errors.ts';
import type { ConfigState, ExtensionToServer, LogEntry, ServerParams } from '../protocol/methods.ts';
import type { HandlerTable } from '../protocol/rpc-peer.ts';
import { BROWSER_PLUGIN, BROWSER_TOOLS } from '../tools/browser-catalog.ts';
import type { ConfirmationDecision, ConfirmationRequest } from './confirmations.ts';
import { PageInteractions } from './page-interactions.ts';
import type { PluginTabs } from './tab-state.ts';
import type { HubDeps, ServerNotification } from './types.ts';
import { buildConfigState } from './sync.ts';

/** What the handlers need of the hub (no import of hub.ts: no cycle). */
export interface HandlerHub {
  notify<M extends ServerNotification>(method: M, params: ServerParams<M>): boolean;
  replaceAllTabs(all: Record<string, PluginTabs>): void;
  setTabs(plugin: string, snapshot: PluginTabs): void;
  onProgress(p: { dispatchId: string; progress: number; total?: number; message?: string }): void;
  setPanelOpen(open: boolean): void;
  routeLog(entry: LogEntry): void;
  /** Another browser waits for the server (it asked within the last seconds). */
  otherBrowser(): { waiting: boolean };
  readonly confirmations: { respond(id: string, decision: ConfirmationDecision['decision'], alwaysAllow?: boolean): unknown; list(): ConfigState['pendingConfirmations']; ask(req: ConfirmationRequest): Promise<ConfirmationDecision> };
}

// plugin.install/remove/update: PluginManager rediscovers and says what changed; the catalog
// rebuild, the extension re-sync and plugins.changed follow from that (server/plugin-events.ts),
// so these handlers only translate.
export function extensionHandlers(ctx: HubDeps, hub: HandlerHub): HandlerTable<typeof ExtensionToServer> {
  const afterConfigChange = () => afterConfig(ctx);
  const interactions = new PageInteractions((req) => hub.confirmations.ask(req));
  return {
    // ---------------------------------------------------------------- notifications
    ping: () => void hub.notify('pong', {}),
    'tab.syncAll': (p) => hub.replaceAllTabs(p.plugins),
    // The peer already restarted the call's timeout; the call's caller gets the report.
    'tool.progress': (p) => hub.onProgress(p),
    'panel.state': (p) => hub.setPanelOpen(p.open),
    'plugin.log': ({ entries }) => {
      ctx.plugins.addLogs(entries);
      for (const entry of entries) hub.routeLog(entry);
    },
    'confirmation.response': (p) => void hub.confirmations.respond(p.id, p.decision, p.alwaysAllow),

    // ---------------------------------------------------------------- requests
    'tab.stateChanged': (p) => {
      hub.setTabs(p.plugin, { state: p.state, tabs: p.tabs });
      return { ok: true };
    },
    'config.getState': () => buildConfigState(ctx, hub.confirmations.list(), hub.otherBrowser().waiting),
    'config.setToolPermission': async (p) => {
      const tool = resolveToolKey(ctx, p.plugin, p.tool);
      await ctx.config.setToolPermission(p.plugin, tool, p.permission);
      return afterConfigChange();
    },
    'config.setPluginPermission': async (p) => {
      assertPlugin(ctx, p.plugin);
      await ctx.config.setPluginPermission(p.plugin, p.permission);
      return afterConfigChange();
    },
    'config.setOriginPermission': async (p) => {
      await ctx.config.setOriginPermission(p.origin, p.permission);
      return afterConfigChange();
    },
    'pageTools.interaction': (p) => interactions.request(p),
    'pageTools.interactionDone': (p) => interactions.done(p.dispatchId),
    'pageTools.update': (p) => {
      const { refused } = ctx.catalog.pageTools.update(p.tabId, p.url, p.tools);
      return { ok: true, refused };
    },
    'config.setSkipPermissions': async (p) => {
      await ctx.config.update((d) => {
        d.skipPermissions = p.skip;
      });
      return afterConfigChange();
    },
    'config.setAllowFileUrls': async (p) => {
      await ctx.config.update((d) => {
        d.allowFileUrls = p.allow;
      });
      return afterConfigChange();
    },
    'config.setPluginSettings': async (p) => {
      await ctx.plugins.setSettings(p.plugin, p.settings);
      return afterConfigChange();
    },
    'plugin.search': async (p) => {
      const found = (await ctx.plugins.search(p.query)) as unknown;
      return { results: (Array.isArray(found) ? found : ((found as { results?: unknown[] })?.results ?? [])) as { name: string; version: string; description: string }[] };
    },
    'plugin.install': async (p) => {
      const { name } = await ctx.plugins.install(p.spec);
      return { ok: true, name };
    },
    'plugin.updateFromRegistry': async (p) => {
      await ctx.plugins.updateFromRegistry(p.name);
      return { ok: true };
    },
    'plugin.remove': async (p) => {
      await ctx.plugins.remove(p.name);
      return { ok: true };
    },
    'plugin.removeBySpecifier': async (p) => {
      const plugin = ctx.plugins.list().find((x) => x.packageName === p.specifier || x.name === p.specifier);
      if (!plugin) throw new OpenTabsError('unknown_plugin', `No installed plugin matches "${p.specifier}".`, { category: 'not_found' });
      await ctx.plugins.remove(plugin.name);
      return { ok: true };
    },
    'plugin.checkUpdates': async () => {
      const found = (await ctx.plugins.checkUpdates()) as unknown;
      return { updates: (Array.isArray(found) ? found : ((found as { updates?: unknown[] })?.updates ?? [])) as { name: string; current: string; latest: string }[] };
    },
    'folder.open': (p) => openFolder(p.path, openableFolders(ctx)),
    // One path at a time, with a turn of the event loop between them: 256 long paths cost up to a
    // few ms each, and other requests are answered meanwhile.
    'file.realPaths': async (p) => {
      const real: string[] = [];
      const linked: boolean[] = [];
      for (const path of p.paths) {
        real.push(realPathOf(path));
        linked.push(hasOtherNames(path));
        await new Promise<void>((done) => setImmediate(done));
      }
      return { real, linked };
    },
  };
}

/** Symbolic links followed through missing targets for one path (Linux's own limit is 40). */
const REAL_PATH_MAX_LINKS = 40;
/** What separates a path's names: '/' (a '\\' is part of a name), and '\\' too on Windows. */
const SEPARATORS = process.platform === 'win32' ? /[\\/]+/ : /\/+/;

/**
 * Where an absolute path leads, symbolic links followed: realpath of the path, or of its deepest
 * existing folder with the rest of the path appended (a file not there yet lies where its folder
 * leads), through links to targets not there (yet). A path that is not absolute comes back as it is;
 * so does one caught in a loop of links. `realpath` is fs.realpathSync (a test counts its calls).
 *
 * The deepest existing folder is found by halving (a path's prefixes exist up to some depth, none
 * past it): a few realpath calls for any path. Walking up one folder at a time took one call per
 * level, each reading the whole path again: an 8 KB path of 4,000 missing levels held the server
 * 0.4 s, and the extension sends 256 paths at once.
 */
export function realPathOf(path: string, realpath: (p: string) => string = realpathSync): string {
  if (!isAbsolute(path)) return path;
  let at = path;
  const seen = new Set<string>();
  for (let hop = 0; hop <= REAL_PATH_MAX_LINKS && !seen.has(at); hop++) {
    seen.add(at);
    const root = parse(at).root;
    const parts = at.slice(root.length).split(SEPARATORS).filter((p) => p !== '');
    const prefix = (n: number) => root + parts.slice(0, n).join(sep);
    const real = (n: number): string | null => {
      try {
        return realpath(prefix(n));
      } catch {
        return null;
      }
    };
    const whole = real(parts.length);
    if (whole !== null) return whole;
    // Deepest n whose prefix resolves (the root always does): lo resolves, hi does not.
    let lo = 0;
    let hi = parts.length;
    let loReal = real(0);
    if (loReal === null) return path;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      const r = real(mid);
      if (r === null) hi = mid;
      else [lo, loReal] = [mid, r];
    }
    // The first missing level: a link to a target not there (yet) leads on from where it points.
    let target: string | null = null;
    try {
      target = readlinkSync(join(loReal, parts[lo]!));
    } catch {}
    if (target === null) return join(loReal, ...parts.slice(lo));
    at = join(resolve(loReal, target), ...parts.slice(lo + 1));
  }
  return path;
}

/**
 * Whether an absolute path leads (symbolic links followed) to a regular file with more than one
 * name: a hard link. Its other names cannot be found from this one, and any of them may be a hidden
 * file's (~/.ssh/id_rsa) or in the OpenTabs config folder, which a path check cannot see.
 */
export function hasOtherNames(path: string): boolean {
  if (!isAbsolute(path)) return false;
  try {
    const s = statSync(path);
    return s.isFile() && s.nlink > 1;
  } catch {
    return false;
  }
}

function afterConfig(ctx: HubDeps): { ok: true } {
  ctx.catalog.rebuild();
  return { ok: true };
}

function assertPlugin(ctx: HubDeps, plugin: string): void {
  if (plugin === BROWSER_PLUGIN) return;
  if (!ctx.plugins.get(plugin)) throw new OpenTabsError('unknown_plugin', `Unknown plugin "${plugin}".`, { category: 'not_found' });
}

/** config.json keys browser tools by full name and plugin tools by short name; accept either for plugins. */
function resolveToolKey(ctx: HubDeps, plugin: string, tool: string): string {
  if (plugin === BROWSER_PLUGIN) {
    if (!BROWSER_TOOLS.some((t) => t.name === tool)) throw new OpenTabsError('unknown_tool', `Unknown browser tool "${tool}".`, { category: 'not_found' });
    return tool;
  }
  const p = ctx.plugins.get(plugin);
  if (!p) throw new OpenTabsError('unknown_plugin', `Unknown plugin "${plugin}".`, { category: 'not_found' });
  const t = p.tools.find((x) => x.name === tool || x.fullName === tool);
  if (!t) throw new OpenTabsError('unknown_tool', `Plugin "${plugin}" has no tool "${tool}".`, { category: 'not_found' });
  return t.name;
}

/** Where a path really is (links followed), or null when it cannot be resolved. */
function realPath(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/** The folders folder.open may show: the config folder (and what is in it) and each plugin's folder. */
function openableFolders(ctx: HubDeps): { under: string[]; exact: string[] } {
  const under = [realPath(ctx.configDir)].filter((p): p is string => p !== null);
  const exact = ctx.plugins
    .list()
    .map((p) => realPath(p.path))
    .filter((p): p is string => p !== null);
  return { under, exact };
}

/**
 * Open a folder in the desktop's file manager, when this machine has one: only the config folder,
 * a folder in it, or a plugin's folder. The opener does more than show folders (macOS `open` runs
 * an .app bundle, which is a folder; a desktop's opener may run a folder's autorun or .desktop
 * entries), so a request naming any other folder is refused, whatever sent it.
 */
async function openFolder(path: string, allowed: { under: string[]; exact: string[] }): Promise<{ ok: true }> {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch {}
  if (!isDir) throw new OpenTabsError('not_found', `No folder at ${path}.`, { category: 'not_found' });
  const real = realPath(path);
  const inside = real !== null && (allowed.exact.includes(real) || allowed.under.some((dir) => real === dir || real.startsWith(dir.endsWith(sep) ? dir : dir + sep)));
  if (!inside || /\.app$/i.test(real)) {
    throw new OpenTabsError('invalid_arguments', `${path} is not a folder OpenTabs opens: only its config folder, the folders in it, and plugin folders.`, { category: 'validation' });
  }
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  if (!Bun.which(opener, { PATH: process.env.PATH ?? '' })) {
    throw new OpenTabsError('not_available', `Opening folders is not available in this environment (no ${opener}). The folder is ${path}.`);
  }
  // Loaded when used: opening a folder is rare, and the server starts faster without it.
  const { spawn } = await import('node:child_process');
  const child = spawn(opener, [real], { detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
  return { ok: true };
}
