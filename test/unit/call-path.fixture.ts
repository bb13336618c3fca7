/**
 * The call path's parts for unit tests: real config, audit and log in a temp dir, a real catalog
 * with one synthetic plugin, and a hub stub that records what it was asked (no socket).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../../server/limits.ts';
import { AuditLog } from '../../server/state/audit.ts';
import { ConfigStore } from '../../server/state/config.ts';
import { ServerLog } from '../../server/state/server-log.ts';
import { CatalogStore } from '../../server/tools/catalog.ts';
import { ConcurrencyGate } from '../../server/tools/gate.ts';
import { InFlightCalls } from '../../server/tools/in-flight.ts';
import type { CallDeps } from '../../server/tools/call.ts';
import type { LoadedPlugin } from '../../server/plugins/types.ts';
import type { PluginManager } from '../../server/plugins/manager.ts';
import type { ExtensionHub } from '../../server/hub/hub.ts';

export const NOTES: LoadedPlugin = {
  name: 'notes',
  displayName: 'Notes',
  description: 'A notes app',
  version: '1.0.0',
  packageName: 'opentabs-plugin-notes',
  urlPatterns: ['http://127.0.0.1/*'],
  excludePatterns: [],
  source: 'local',
  path: '/nowhere/notes',
  sdkVersion: null,
  adapterFile: 'adapters/notes-0.js',
  adapterHash: '0',
  tools: [
    {
      name: 'get',
      fullName: 'notes_get',
      description: 'Get a note',
      inputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
      annotations: { readOnlyHint: true },
    },
  ],
};

export interface HubCalls {
  dispatched: { plugin: string; wireName: string; fullName: string; input: Record<string, unknown> }[];
  asked: { tool: string }[];
}

export async function callPathParts(opts: { decision?: 'allow' | 'deny'; value?: unknown } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'opentabs-unit-'));
  const config = await ConfigStore.open(dir);
  const audit = await AuditLog.open(dir, DEFAULT_LIMITS.auditRotateBytes);
  const log = new ServerLog(join(dir, 'server.log'));
  let plugins: LoadedPlugin[] = [NOTES];
  const pluginManager = {
    list: () => plugins,
    get: (name: string) => plugins.find((p) => p.name === name),
    resolvedSettings: () => ({}),
    missingRequiredSetting: () => null,
    failed: () => [],
  } as unknown as PluginManager;
  const catalog = new CatalogStore({ config, plugins: pluginManager, log });
  const calls: HubCalls = { dispatched: [], asked: [] };
  const hub = {
    connected: true,
    // The user has the plugin's app open in one tab (an asked plugin call runs in a tab of its plugin).
    tabsFor: () => ({ state: 'ready', tabs: [{ tabId: 7, url: 'https://notes.example/', title: 'Notes', ready: true }] }),
    allTabStates: () => new Map(),
    confirm: async (req: { tool: string }) => {
      calls.asked.push({ tool: req.tool });
      return { decision: opts.decision ?? 'allow' };
    },
    dispatch: async (req: HubCalls['dispatched'][number]) => {
      calls.dispatched.push({ plugin: req.plugin, wireName: req.wireName, fullName: req.fullName, input: req.input });
      return { value: opts.value ?? { ok: true } };
    },
  } as unknown as ExtensionHub;
  const deps: CallDeps = {
    options: { port: 0, configDir: dir },
    limits: DEFAULT_LIMITS,
    configDir: dir,
    config,
    audit,
    log,
    plugins: pluginManager,
    catalog,
    calls: new InFlightCalls(),
    gate: new ConcurrencyGate(),
    hub,
  };
  return { deps, calls, config, audit, catalog, setPlugins: (p: LoadedPlugin[]) => (plugins = p) };
}
