/**
 * Plugin operations on the config dir without a running server, for the CLI
 * (`opentabs plugin list|install|uninstall|configure`). With a server running the CLI should
 * POST /reload afterwards (or use POST /plugin-settings for configure) so the change goes live.
 */
import { OpenTabsError } from '../errors.ts';
import { ConfigStore } from '../state/config.ts';
import { discoverPlugins, type Discovered } from './discover.ts';
import { manifestCacheWritten } from './schema-cache.ts';
import { loadPluginFolder } from './load.ts';
import { pluginNameFromPackage, resolveSettings } from '../protocol/plugin-manifest.ts';
import { installedPluginDirs, installPrefix, npmInstall, npmUninstall } from './npm.ts';
import { mergeSettings } from './settings.ts';
import { checkBroadConsent, forgetBroadConsent, recordBroadConsent, type AddOptions } from './local.ts';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shellWord } from '../cli-command.ts';
import type { FailedPlugin, LoadedPlugin } from './types.ts';

export interface PluginListing {
  plugins: LoadedPlugin[];
  failed: FailedPlugin[];
  discoveryErrors: string[];
}

async function discover(configDir: string): Promise<{ store: ConfigStore; found: Discovered }> {
  const store = await ConfigStore.open(configDir);
  const found = await discoverPlugins(configDir, store.get().localPlugins);
  // The CLI exits right after: let the manifest cache file be written whole.
  await manifestCacheWritten();
  return { store, found };
}

export async function listPlugins(configDir: string): Promise<PluginListing> {
  const { found } = await discover(configDir);
  return { plugins: found.plugins.map((p) => p.plugin), failed: found.failed, discoveryErrors: found.errors };
}

/**
 * The error for a plugin folder installed before it was built (npm copies a folder as it is,
 * without running its prepack build): the author is the one installing, so the words are the
 * build to run in that folder, not a note to a package's publisher. undefined for anything else.
 */
function unbuiltFolderError(spec: string, error: string): string | undefined {
  if (!error.startsWith('dist/tools.json (the package was published without its build output')) return undefined;
  // A path (as npmInstall takes one), not a registry name such as @scope/opentabs-plugin-x.
  if (!/^\.{0,2}[\\/]/.test(spec) && (spec.startsWith('@') || !spec.includes('/'))) return undefined;
  const folder = resolve(spec);
  try {
    if (!statSync(folder).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return `${folder} has no dist/tools.json: the folder is not built. Run \`opentabs plugin build ${shellWord(folder)}\`, then install it again (or use the folder as it is, rebuilt as you change it, with \`opentabs plugin add ${shellWord(folder)}\`)`;
}

/**
 * npm install into <configDir>/plugins with scripts disabled; the package must be a plugin that
 * loads, otherwise it is uninstalled again and the reason thrown. New plugins start at `ask`;
 * one whose patterns cover every site or file is refused (and uninstalled) without
 * `allowBroadPatterns`, and with it starts with every tool `off`.
 */
export async function installPlugin(
  configDir: string,
  spec: string,
  onProgress?: (line: string) => void,
  o: AddOptions & { /** Leave out the closing "Plugin … installed" progress line (the caller reports the result itself). */ quietResult?: boolean } = {},
): Promise<{ name: string; packageName: string; tools: number; broadPatterns?: string[] }> {
  const packageName = await npmInstall(configDir, spec, onProgress);
  const name = pluginNameFromPackage(packageName);
  if (!name) {
    await npmUninstall(configDir, packageName).catch(() => {});
    throw new OpenTabsError('bad_request', `${packageName} is not an OpenTabs plugin: package names must be opentabs-plugin-<name> or @scope/opentabs-plugin-<name>`);
  }
  const loaded = await loadPluginFolder(join(installPrefix(configDir), 'node_modules', packageName), 'npm');
  if (!loaded.ok) {
    await npmUninstall(configDir, packageName).catch(() => {});
    throw new OpenTabsError('bad_request', `${packageName} cannot be loaded, so it was not kept: ${unbuiltFolderError(spec, loaded.error) ?? loaded.error}`);
  }
  // Installed under another name (an npm alias, `opentabs-plugin-a@npm:<package>`): the plugin it
  // loads as is named by the package inside, not by the name given, and would escape the checks below.
  if (loaded.plugin.packageName !== packageName) {
    await npmUninstall(configDir, packageName).catch(() => {});
    throw new OpenTabsError('bad_request', `${packageName} was installed from the package ${loaded.plugin.packageName} (an alias); it was not kept. Install the plugin by its own name.`);
  }
  const store = await ConfigStore.open(configDir);
  // A plugin name belongs to one package or folder: permissions, settings and broad-pattern
  // consent are kept by name, so a second package of that name (another scope, another author)
  // would get what the user gave the first, or replace it unseen.
  const taken = await otherProviderOf(configDir, store.get().localPlugins, name, packageName);
  if (taken) {
    await npmUninstall(configDir, packageName).catch(() => {});
    throw new OpenTabsError(
      'bad_request',
      `${packageName} provides plugin "${name}", which ${taken} already provides; it was not kept. ` +
        `Remove that one first (\`opentabs plugin remove ${name}\`) if you mean to replace it.`,
    );
  }
  let consent: { broad: string[]; fresh: boolean };
  try {
    consent = checkBroadConsent(store.get(), name, loaded.plugin.urlPatterns, o);
  } catch (err) {
    await npmUninstall(configDir, packageName).catch(() => {});
    throw err;
  }
  const broad = consent.broad;
  if (consent.fresh) await store.update((d) => recordBroadConsent(d, name));
  else if (!store.get().permissions[name]?.default) await store.setPluginPermission(name, 'ask');
  if (!o.quietResult) onProgress?.(`Plugin "${name}" installed (${loaded.plugin.tools.length === 1 ? '1 tool' : `${loaded.plugin.tools.length} tools`}; permission: ${store.permissionFor(name, '', 'ask')})`);
  return { name, packageName, tools: loaded.plugin.tools.length, ...(broad.length > 0 ? { broadPatterns: broad } : {}) };
}

/** Another npm package or local folder providing plugin `name` (described), or null. */
async function otherProviderOf(configDir: string, localPlugins: readonly string[], name: string, packageName: string): Promise<string | null> {
  for (const dir of await installedPluginDirs(configDir)) {
    const pkg = dir.split('/node_modules/').pop() ?? '';
    if (pkg !== packageName && pluginNameFromPackage(pkg) === name) return `the npm package ${pkg}`;
  }
  for (const p of localPlugins) {
    const dir = resolve(configDir, p);
    // A local copy of the same package (its author's working folder) is that package.
    const r = await loadPluginFolder(dir, 'local').catch(() => null);
    if (r?.ok && r.plugin.name === name && r.plugin.packageName !== packageName) return `the local folder ${dir}`;
  }
  return null;
}

/** npm uninstall the package(s) providing this plugin (by plugin or package name). */
export async function uninstallPlugin(configDir: string, nameOrPackage: string): Promise<string[]> {
  const name = pluginNameFromPackage(nameOrPackage) ?? nameOrPackage;
  const pkgs = (await installedPluginDirs(configDir))
    .map((d) => d.split('/node_modules/').pop() ?? '')
    .filter((pkg) => pluginNameFromPackage(pkg) === name);
  if (pkgs.length === 0) throw new OpenTabsError('unknown_plugin', `No npm-installed plugin "${nameOrPackage}" in ${installPrefix(configDir)}`);
  for (const pkg of pkgs) await npmUninstall(configDir, pkg);
  const store = await ConfigStore.open(configDir);
  await store.update((d) => forgetBroadConsent(d, name));
  return pkgs;
}

/** Validate against the plugin's configSchema and save; returns the resolved settings. */
export async function configurePlugin(configDir: string, name: string, settings: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { store, found } = await discover(configDir);
  const plugin = found.plugins.find((p) => p.plugin.name === name)?.plugin;
  if (!plugin) throw new OpenTabsError('unknown_plugin', `No plugin named "${name}" is loaded (see \`opentabs plugin list\`)`);
  const merged = mergeSettings(name, plugin.configSchema, store.get().pluginSettings[name], settings);
  await store.update((d) => {
    d.pluginSettings[name] = merged;
  });
  return resolveSettings(plugin.configSchema, merged);
}
