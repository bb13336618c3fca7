/**
 * Changing state the server owns, from the CLI: through the running server when there is one
 * (POST /plugin-settings, POST /reload) so it validates and re-syncs the extension, else straight
 * into config.json with the same validation.
 */
import { join } from 'node:path';
import { ADMIN_RATE_LIMIT } from '../server/limits.ts';
import { ConfigStore } from '../server/state/config.ts';
import { ensureStateDirs } from '../server/state/paths.ts';
import { configurePlugin } from '../server/plugins/offline.ts';
import { findPlugin, coerceSetting } from './plugin-lookup.ts';
import { readConfigSnapshot } from './config-snapshot.ts';
import { CliError, err } from './output.ts';
import { api, probePort, ServerUnverifiedError, type Target } from './server-client.ts';

/** Re-exported for commands that read and write config.json. */
export { readConfigSnapshot };

export async function serverRunning(t: Target): Promise<boolean> {
  return (await probePort(t.port)).kind === 'opentabs';
}

/** Parse `key=value` pairs and coerce them per the plugin's configSchema. */
export async function parseSettingPairs(configDir: string, plugin: string, pairs: string[]): Promise<Record<string, unknown>> {
  const loaded = await findPlugin(configDir, plugin);
  const settings: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new CliError(`Expected key=value, got ${JSON.stringify(pair)}.`, 2);
    const key = pair.slice(0, eq).trim();
    if (Object.hasOwn(settings, key)) throw new CliError(`Setting "${key}" is given twice; give each setting once.`, 2);
    settings[key] = coerceSetting(loaded.configSchema, key, pair.slice(eq + 1));
  }
  return settings;
}

/** Save settings (merged into what is saved; null clears a key). Returns how they were applied. */
export async function savePluginSettings(t: Target, plugin: string, settings: Record<string, unknown>): Promise<'server' | 'config'> {
  if (await serverRunning(t)) {
    await api(t, 'POST', '/plugin-settings', { body: { plugin, settings } });
    return 'server';
  }
  await ensureStateDirs(t.configDir);
  try {
    await configurePlugin(t.configDir, plugin, settings);
  } catch (e) {
    throw new CliError((e as Error).message);
  }
  return 'config';
}

/** Ask a running server to re-read config.json (after the CLI wrote it). */
export async function reloadIfRunning(t: Target, secret?: string | null): Promise<boolean> {
  if (!(await serverRunning(t))) return false;
  // No server of this config dir is recorded (server.pid), and the one on the default port does not
  // know this config dir's secret (another config dir's server, or another program). The change is
  // saved; not ours to reload.
  const notRecorded = t.portSource === 'default' || t.portSource === 'last';
  let r: { status: number };
  try {
    r = await api(t, 'POST', '/reload', { secret, timeoutMs: 60_000, okStatuses: notRecorded ? [401, 429] : [429] });
  } catch (e) {
    // The process on the port could not prove it knows this config dir's secret (nothing was sent).
    if (!(notRecorded && e instanceof ServerUnverifiedError)) throw e;
    r = { status: 401 };
  }
  if (r.status === 429) {
    // The server takes 10 reloads a minute: the change is on disk, but not in effect until the next one.
    const retry = (r as { body?: { error?: { retryAfter?: unknown; message?: unknown } } }).body?.error;
    const seconds = /retry after (\d+) s/.exec(typeof retry?.message === 'string' ? retry.message : '')?.[1];
    throw new CliError(
      `The change is saved in ${join(t.configDir, 'config.json')}, but it is not in effect yet: the running server on ${t.url} ` +
        `refused to reload (at most ${ADMIN_RATE_LIMIT.max} reloads a minute). Run the same command again${seconds ? ` in ${seconds} s` : ' in a minute'}; any later reload applies it too.`,
    );
  }
  if (r.status === 401) {
    err(`note: the server on ${t.url} is not this config dir's (it does not know the secret of ${t.configDir}; an OpenTabs server of another config dir?), so it was not reloaded; a server started with this config dir loads the change.`);
    return false;
  }
  return true;
}


/** The config store for a change; creates the state dirs first (a CLI change may come before any start). */
export async function openConfigForWrite(dir: string): Promise<ConfigStore> {
  await ensureStateDirs(dir);
  return ConfigStore.open(dir);
}
