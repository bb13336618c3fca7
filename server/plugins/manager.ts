/**
 * PluginManager: discovery (local folders from config.json + packages in <configDir>/plugins),
 * manifest validation, adapter files, settings, install/remove through npm (scripts disabled),
 * per-plugin log buffers and the dev-mode file watcher. Contract: docs/internals.md.
 */
import { resolve } from 'node:path';
import type { ConfigStore } from '../state/config.ts';
import type { ServerLog } from '../state/server-log.ts';
import { OpenTabsError } from '../errors.ts';
import { PLUGIN_LOG_BUFFER_SIZE, WATCH_POLL_INTERVAL_MS } from '../limits.ts';
import type { LogEntry } from '../protocol/methods.ts';
import { pruneAdapters, writeAdapter } from './adapters.ts';
import { discoverPlugins, localPluginPaths } from './discover.ts';
import { resolveSettings, pluginNameFromPackage, type ConfigField } from '../protocol/plugin-manifest.ts';
import { installPlugin } from './offline.ts';
import { mergeSettings } from './settings.ts';
import { installedPluginDirs, npmOutdated, npmSearch, npmUninstall, type SearchHit, type UpdateInfo } from './npm.ts';
import type { FailedPlugin, LoadedPlugin } from './types.ts';
import { PluginWatcher, type WatcherStatus } from './watcher.ts';

/**
 * What changed, for whoever keeps derived state (serve.ts wires it: the catalog rebuilds, the
 * extension is told). The manager itself calls no other part.
 */
export type PluginChange =
  /** The set of plugins changed (install, remove, a local plugin appeared or broke). */
  | { type: 'reload' }
  /** One plugin's code was rebuilt in place (same set): its tools may differ, the rest did not. */
  | { type: 'code'; plugin: string }
  /** One plugin's settings changed: its adapter sees them with the next dispatch. */
  | { type: 'settings'; plugin: string }
  /** A plugin is gone: the extension disposes it in every tab. */
  | { type: 'uninstalled'; plugin: string };

/** What the manager needs: its config, where plugins live, and a log. */
export interface PluginManagerDeps {
  config: ConfigStore;
  configDir: string;
  log: ServerLog;
}

export class PluginManager {
  private plugins = new Map<string, LoadedPlugin>();
  private failures: FailedPlugin[] = [];
  private errors: string[] = [];
  private logBuffers = new Map<string, LogEntry[]>();
  private listeners = new Set<(e: PluginChange) => void>();
  private watcher: PluginWatcher;
  /** Discoveries run one at a time; a call made during a run waits for a fresh one. */
  private discovering: Promise<void> = Promise.resolve();
  /** npm operations on the shared prefix run one at a time. */
  private npmQueue: Promise<unknown> = Promise.resolve();

  constructor(private readonly ctx: PluginManagerDeps) {
    this.watcher = new PluginWatcher((dir) => void this.onLocalChange(dir), WATCH_POLL_INTERVAL_MS);
  }

  // ------------------------------------------------------------------ discovery

  /**
   * Load the plugins again. Resolves once the new list is in place and the adapter files no plugin
   * uses any more are removed; with `pruneLater` (the server's start), as soon as the list is in
   * place: the removal then goes on in the background, and the next discovery waits for it before
   * writing any adapter.
   */
  discover(opts: { pruneLater?: boolean } = {}): Promise<void> {
    const run = () => this.discoverNow();
    const p = this.discovering.then(run, run);
    this.discovering = p.then(() => this.pruning).catch(() => {});
    return opts.pruneLater ? p : p.then(() => this.pruning);
  }

  /** The removal of unused adapter files started by the last discovery (it never rejects). */
  private pruning: Promise<void> = Promise.resolve();

  private async discoverNow(): Promise<void> {
    const configDir = this.ctx.configDir;
    const found = await discoverPlugins(configDir, this.ctx.config.get().localPlugins);
    const next = new Map<string, LoadedPlugin>();
    const failed = [...found.failed];
    // Adapter files are checked (and written when new) all at once, not one after another. No
    // source: found unchanged with its adapter file in place (discover.ts), nothing to wait for.
    const writes = found.plugins.map(({ plugin, adapterSource }) =>
      adapterSource === undefined
        ? null
        : writeAdapter(configDir, plugin.adapterFile, adapterSource, plugin.adapterHash).then(
            () => null,
            (err: unknown) => `cannot write adapter: ${(err as Error).message}`,
          ),
    );
    const written = writes.some((w) => w !== null) ? await Promise.all(writes) : (writes as null[]);
    found.plugins.forEach(({ plugin }, i) => {
      const error = written[i];
      if (error) failed.push({ path: plugin.path, name: plugin.name, error });
      else next.set(plugin.name, plugin);
    });
    this.pruning = pruneAdapters(configDir, new Set([...next.values()].map((p) => p.adapterFile))).catch(() => {});

    this.plugins = next;
    this.failures = failed;
    this.errors = found.errors;
    this.watcher.setPaths(found.localPaths);
    for (const f of failed) this.ctx.log.warn('plugin_failed', { path: f.path, error: f.error });
  }

  private localPaths(): string[] {
    return localPluginPaths(this.ctx.configDir, this.ctx.config.get().localPlugins);
  }

  list(): LoadedPlugin[] {
    return [...this.plugins.values()];
  }

  get(name: string): LoadedPlugin | undefined {
    return this.plugins.get(name);
  }

  failed(): FailedPlugin[] {
    return [...this.failures];
  }

  discoveryErrors(): string[] {
    return [...this.errors];
  }

  // ------------------------------------------------------------------ settings

  async setSettings(name: string, settings: Record<string, unknown>): Promise<void> {
    const plugin = this.plugins.get(name);
    if (!plugin) throw new OpenTabsError('unknown_plugin', `No plugin named "${name}" is loaded`, { category: 'not_found' });
    const merged = mergeSettings(name, plugin.configSchema, this.ctx.config.get().pluginSettings[name], settings);
    await this.ctx.config.update((d) => {
      d.pluginSettings[name] = merged;
    });
    this.afterSettingsChange(name);
  }

  /**
   * A required setting (no default) the user has not set, or null: a call of the plugin is refused
   * naming it, before anyone is asked, instead of running with the value missing.
   */
  missingRequiredSetting(name: string): { key: string; field: ConfigField } | null {
    const plugin = this.plugins.get(name);
    const resolved = this.resolvedSettings(name);
    for (const [key, field] of Object.entries(plugin?.configSchema ?? {})) {
      if (field.required === true && field.default === undefined && (resolved[key] === undefined || resolved[key] === '')) return { key, field };
    }
    return null;
  }

  resolvedSettings(name: string): Record<string, unknown> {
    const plugin = this.plugins.get(name);
    return resolveSettings(plugin?.configSchema, this.ctx.config.get().pluginSettings[name]);
  }

  /** The adapter gets new settings with the next dispatch; the side panel learns at once. */
  private afterSettingsChange(name: string): void {
    const plugin = this.plugins.get(name);
    if (!plugin) return;
    this.emit({ type: 'settings', plugin: name });
  }

  // ------------------------------------------------------------------ install / remove

  private serialized<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.npmQueue.then(fn, fn);
    this.npmQueue = p.catch(() => {});
    return p;
  }

  install(spec: string, onProgress?: (line: string) => void): Promise<{ name: string }> {
    return this.serialized(() => this.installNow(spec, onProgress));
  }

  private async installNow(spec: string, onProgress?: (line: string) => void): Promise<{ name: string }> {
    const { name } = await installPlugin(this.ctx.configDir, spec, onProgress);
    await this.ctx.config.reload();
    await this.discover();
    this.publish();
    const failure = this.failures.find((f) => f.name === name);
    if (failure) throw new OpenTabsError('bad_request', `Plugin "${name}" was installed but cannot be loaded: ${failure.error}`);
    onProgress?.(`Plugin "${name}" ready (${this.plugins.get(name)?.tools.length ?? 0} tools)`);
    return { name };
  }

  /** Remove by plugin name (or package name): npm-installed packages are uninstalled, local folders are unlisted. */
  remove(nameOrPackage: string): Promise<void> {
    return this.serialized(() => this.removeNow(nameOrPackage));
  }

  private async removeNow(nameOrPackage: string): Promise<void> {
    const name = pluginNameFromPackage(nameOrPackage) ?? nameOrPackage;
    const loaded = this.plugins.get(name);
    const localMatch = this.localPaths().filter((p) => p === loaded?.path || this.failures.some((f) => f.path === p && f.name === name));
    const npmDirs = await installedPluginDirs(this.ctx.configDir);
    const npmPkgs = npmDirs.map((d) => d.split('/node_modules/').pop() ?? '').filter((pkg) => pluginNameFromPackage(pkg) === name);
    if (localMatch.length === 0 && npmPkgs.length === 0) {
      throw new OpenTabsError('unknown_plugin', `No plugin named "${nameOrPackage}" is installed or added`);
    }
    if (localMatch.length > 0) {
      await this.ctx.config.update((d) => {
        d.localPlugins = d.localPlugins.filter((p) => !localMatch.includes(resolve(this.ctx.configDir, p)));
      });
    }
    for (const pkg of npmPkgs) await npmUninstall(this.ctx.configDir, pkg);
    await this.discover();
    if (!this.plugins.has(name)) {
      this.emit({ type: 'uninstalled', plugin: name });
    }
    this.publish();
  }

  search(query: string): Promise<SearchHit[]> {
    return npmSearch(this.ctx.configDir, query);
  }

  checkUpdates(): Promise<UpdateInfo[]> {
    return npmOutdated(this.ctx.configDir);
  }

  async updateFromRegistry(name: string): Promise<void> {
    const plugin = this.plugins.get(name);
    const pkg = plugin?.source === 'npm' ? plugin.packageName : (pluginNameFromPackage(name) ? name : null);
    if (!pkg) throw new OpenTabsError('unknown_plugin', `No npm-installed plugin named "${name}"`);
    await this.install(`${pkg}@latest`);
  }

  /** After install/remove: new catalog, full sync to the extension, side panel refresh. */
  private publish(): void {
    this.emit({ type: 'reload' });
  }

  // ------------------------------------------------------------------ logs

  addLogs(entries: LogEntry[]): void {
    for (const e of entries) {
      // Only loaded plugins get a buffer: a misbehaving extension cannot grow memory with made-up names.
      if (!this.get(e.plugin)) continue;
      let buf = this.logBuffers.get(e.plugin);
      if (!buf) this.logBuffers.set(e.plugin, (buf = []));
      buf.push(e);
      if (buf.length > PLUGIN_LOG_BUFFER_SIZE) buf.splice(0, buf.length - PLUGIN_LOG_BUFFER_SIZE);
    }
  }

  logBufferSize(name: string): number {
    return this.logBuffers.get(name)?.length ?? 0;
  }

  logs(name?: string): LogEntry[] {
    if (name) return [...(this.logBuffers.get(name) ?? [])];
    return [...this.logBuffers.values()].flat().sort((a, b) => a.ts - b.ts);
  }

  // ------------------------------------------------------------------ dev watcher

  startWatching(): void {
    this.watcher.setPaths(this.localPaths());
    this.watcher.start();
  }

  stopWatching(): void {
    this.watcher.stop();
  }

  watcherStatus(): WatcherStatus {
    return this.watcher.status();
  }

  onChange(cb: (e: PluginChange) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** A local plugin's dist/ changed: rediscover, then say whether only its code changed or the set did. */
  private async onLocalChange(dir: string): Promise<void> {
    const before = new Map([...this.plugins].map(([n, p]) => [n, p.adapterHash]));
    try {
      await this.discover();
    } catch (err) {
      this.ctx.log.error('plugin_reload_failed', { path: dir, error: String((err as Error).message) });
      return;
    }
    const plugin = this.list().find((p) => p.path === dir);
    const sameSet = before.size === this.plugins.size && [...before.keys()].every((n) => this.plugins.has(n));
    // One plugin rebuilt in place: it alone goes to the extension (plugin.update); otherwise the
    // catalog change re-syncs everything.
    if (plugin && sameSet) {
      this.ctx.log.info('plugin_updated', { plugin: plugin.name, hash: plugin.adapterHash });
      this.emit({ type: 'code', plugin: plugin.name });
    } else {
      this.emit({ type: 'reload' });
    }
  }

  private emit(e: PluginChange): void {
    for (const cb of this.listeners) this.safe(() => cb(e));
  }

  /** Notifying other parts must never break plugin bookkeeping (e.g. extension not connected). */
  private safe(fn: () => unknown): void {
    try {
      fn();
    } catch (err) {
      this.ctx.log.warn('plugin_notify_failed', { error: String((err as Error)?.message ?? err) });
    }
  }
}
