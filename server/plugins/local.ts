/**
 * `opentabs plugin add <path>` / `opentabs plugin remove <name>` on config.json, usable with or
 * without a running server (the CLI POSTs /reload afterwards when one is running).
 */
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { OpenTabsError } from '../errors.ts';
import { ConfigStore, type ConfigData } from '../state/config.ts';
import { loadPluginFolder } from './load.ts';
import { broadPatterns } from '../protocol/plugin-manifest.ts';

export interface AddOptions {
  /** The user consented to patterns that match every site or every file (`--allow-broad-patterns`). */
  allowBroadPatterns?: boolean;
}

/** config.json key listing the plugins whose broad patterns the user consented to. */
export const BROAD_CONSENT_KEY = 'broadPatternConsent';

function consentList(d: ConfigData): string[] {
  const v = d[BROAD_CONSENT_KEY];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Whether the user consented to this plugin's broad patterns (at add or install time). */
export function hasBroadConsent(d: ConfigData, name: string): boolean {
  return consentList(d).includes(name);
}

/**
 * A plugin whose urlPatterns cover every site or every local file runs its adapter in all those
 * pages, so it is refused unless the user consented now (`allowBroadPatterns`) or earlier (an
 * update of a plugin they already accepted). The message names the patterns and the flag.
 * `fresh`: consent given just now — the plugin then starts with every tool off.
 */
export function checkBroadConsent(d: ConfigData, name: string, urlPatterns: readonly string[], o: AddOptions): { broad: string[]; fresh: boolean } {
  const broad = broadPatterns(urlPatterns);
  if (broad.length === 0 || consentList(d).includes(name)) return { broad, fresh: false };
  if (!o.allowBroadPatterns) {
    throw new OpenTabsError(
      'broad_patterns_need_consent',
      `Plugin "${name}" asks to run on every site or every file (${broad.join(', ')}): its code would run in every page those patterns match. ` +
        `Nothing was added. If you trust it, repeat with --allow-broad-patterns; its tools then start off until you turn them on in the side panel or with \`opentabs config set permission.${name} ask\`.`,
      { category: 'validation' },
    );
  }
  return { broad, fresh: true };
}

/** Consent just given: remember it, and every tool of the plugin starts off (earlier choices dropped). */
export function recordBroadConsent(d: ConfigData, name: string): void {
  d[BROAD_CONSENT_KEY] = [...consentList(d).filter((n) => n !== name), name];
  d.permissions[name] = { default: 'off' };
}

/** The plugin is gone: a later add or install of that name asks again. */
export function forgetBroadConsent(d: ConfigData, name: string): void {
  const list = consentList(d);
  if (list.includes(name)) d[BROAD_CONSENT_KEY] = list.filter((n) => n !== name);
}

export interface AddLocalResult {
  path: string;
  /** Plugin name when the folder already loads (a build may still be missing). */
  name?: string;
  /** Why it does not load yet (e.g. not built), shown as a hint; the folder is added anyway. */
  warning?: string;
  /** Patterns matching every site or file the user consented to; the plugin's tools start off. */
  broadPatterns?: string[];
}

export async function addLocalPlugin(configDir: string, pathArg: string, o: AddOptions = {}): Promise<AddLocalResult> {
  const path = resolve(pathArg);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new OpenTabsError('bad_request', `${path} is not a folder`);
  if (!existsSync(resolve(path, 'package.json'))) throw new OpenTabsError('bad_request', `${path} has no package.json: not a plugin folder`);
  const r = await loadPluginFolder(path, 'local');
  if (!r.ok && !r.name) throw new OpenTabsError('bad_request', `${path} is not an OpenTabs plugin: ${r.error}`);
  const name = r.ok ? r.plugin.name : r.name!;
  const store = await ConfigStore.open(configDir);
  // Another listed folder with the same plugin name would win and this one be ignored at discovery.
  for (const other of store.get().localPlugins.map((p) => resolve(configDir, p))) {
    if (other === path) continue;
    const o = await loadPluginFolder(other, 'local');
    if ((o.ok ? o.plugin.name : o.name) === name) {
      throw new OpenTabsError(
        'bad_request',
        `plugin "${name}" is already added from ${other}, which would be loaded instead of ${path}; remove that folder first (\`opentabs plugin remove ${other}\`) or give this plugin another name`,
      );
    }
  }
  // Checked before anything is written: a refused plugin leaves config.json as it was.
  const { broad, fresh } = r.ok ? checkBroadConsent(store.get(), name, r.plugin.urlPatterns, o) : { broad: [], fresh: false };
  await store.update((d) => {
    if (!d.localPlugins.map((p) => resolve(configDir, p)).includes(path)) d.localPlugins.push(path);
    if (fresh) return recordBroadConsent(d, name);
    // Newly added plugins start at `ask` unless the user already chose.
    const perm = (d.permissions[name] ??= {});
    perm.default ??= 'ask';
  });
  return { path, name, ...(broad.length > 0 ? { broadPatterns: broad } : {}), ...(r.ok ? {} : { warning: r.error }) };
}

/** Remove a local plugin folder by plugin name or path. Returns the removed path. */
export async function removeLocalPlugin(configDir: string, nameOrPath: string): Promise<string> {
  const store = await ConfigStore.open(configDir);
  const paths = store.get().localPlugins.map((p) => resolve(configDir, p));
  let match = paths.find((p) => p === resolve(nameOrPath));
  if (!match) {
    for (const p of paths) {
      const r = await loadPluginFolder(p, 'local');
      if ((r.ok ? r.plugin.name : r.name) === nameOrPath) {
        match = p;
        break;
      }
    }
  }
  if (!match) throw new OpenTabsError('unknown_plugin', `No local plugin "${nameOrPath}" in config.json (see \`opentabs plugin list\`)`);
  const target = match;
  const loaded = await loadPluginFolder(target, 'local');
  const name = loaded.ok ? loaded.plugin.name : loaded.name;
  await store.update((d) => {
    d.localPlugins = d.localPlugins.filter((p) => resolve(configDir, p) !== target);
    if (name) forgetBroadConsent(d, name);
  });
  return target;
}
