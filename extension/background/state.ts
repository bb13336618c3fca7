/**
 * The service worker's state. Chrome may stop the worker at any time; what must survive a
 * restart (the last plugin list, pending approvals) is mirrored to chrome.storage.session and
 * restored before the worker handles anything.
 */
import type { BrowserToolInfo, ConfigState, FailedPlugin, PluginInfo, TabInfo, TabState } from '../../server/protocol/methods.ts';

export type ConnectionState = 'connecting' | 'connected' | 'server_not_running' | 'auth_failed' | 'not_installed' | 'replaced' | 'disconnected';

export interface ConnectionStatus {
  state: ConnectionState;
  /** Human text for the side panel when not connected. */
  reason?: string;
  port?: number;
  since: number;
}

export type PendingConfirmation = ConfigState['pendingConfirmations'][number];
export interface TabSnapshot {
  state: TabState;
  tabs: TabInfo[];
}

export interface Invocation {
  dispatchId: string;
  tool: string;
  plugin: string;
  ts: number;
}

export interface LogLine {
  ts: number;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/** What the side panel renders (pushed on every change). */
export interface ViewState {
  connection: ConnectionStatus;
  serverVersion: string;
  extensionVersion: string;
  skipPermissions: boolean;
  plugins: (PluginInfo & { tabState: TabSnapshot })[];
  failedPlugins: FailedPlugin[];
  browserTools: BrowserToolInfo[];
  pending: PendingConfirmation[];
  invocations: Invocation[];
}

const SESSION_KEY = 'opentabs-state';
const LOG_RING = 200;

class Store {
  connection: ConnectionStatus = { state: 'connecting', since: Date.now() };
  serverVersion = '';
  plugins = new Map<string, PluginInfo>();
  browserTools: BrowserToolInfo[] = [];
  failedPlugins: FailedPlugin[] = [];
  skipPermissions = false;
  pending = new Map<string, PendingConfirmation>();
  tabStates = new Map<string, TabSnapshot>();
  invocations = new Map<string, Invocation>();
  logs: LogLine[] = [];
  private listeners = new Set<() => void>();
  private notifyQueued = false;

  onChange(cb: () => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Coalesce bursts of changes into one push per task. */
  changed(): void {
    if (this.notifyQueued) return;
    this.notifyQueued = true;
    setTimeout(() => {
      this.notifyQueued = false;
      for (const cb of this.listeners) {
        try {
          cb();
        } catch {}
      }
    }, 0);
  }

  setConnection(state: ConnectionState, reason?: string, port?: number): void {
    if (this.connection.state === state && this.connection.reason === reason) return;
    this.connection = { state, ...(reason ? { reason } : {}), ...(port ? { port } : {}), since: Date.now() };
    this.log(state === 'connected' ? 'info' : 'warn', `connection: ${state}${reason ? ` (${reason})` : ''}`);
    this.changed();
  }

  log(level: LogLine['level'], message: string): void {
    this.logs.push({ ts: Date.now(), level, message });
    if (this.logs.length > LOG_RING) this.logs.splice(0, this.logs.length - LOG_RING);
  }

  tabSnapshot(plugin: string): TabSnapshot {
    return this.tabStates.get(plugin) ?? { state: 'closed', tabs: [] };
  }

  view(): ViewState {
    return {
      connection: this.connection,
      serverVersion: this.serverVersion,
      extensionVersion: chrome.runtime.getManifest().version,
      skipPermissions: this.skipPermissions,
      plugins: [...this.plugins.values()].map((p) => ({ ...p, tabState: this.tabSnapshot(p.name) })),
      failedPlugins: this.failedPlugins,
      browserTools: this.browserTools,
      pending: [...this.pending.values()].filter((c) => c.expiresAt > Date.now()),
      invocations: [...this.invocations.values()],
    };
  }

  async persist(): Promise<void> {
    try {
      await chrome.storage.session.set({
        [SESSION_KEY]: {
          serverVersion: this.serverVersion,
          plugins: [...this.plugins.values()],
          browserTools: this.browserTools,
          failedPlugins: this.failedPlugins,
          skipPermissions: this.skipPermissions,
          pending: [...this.pending.values()],
        },
      });
    } catch {}
  }

  async restore(): Promise<void> {
    try {
      const got = (await chrome.storage.session.get(SESSION_KEY))[SESSION_KEY] as Record<string, any> | undefined;
      if (!got) return;
      this.serverVersion = got.serverVersion ?? '';
      this.plugins = new Map((got.plugins ?? []).map((p: PluginInfo) => [p.name, p]));
      this.browserTools = got.browserTools ?? [];
      this.failedPlugins = got.failedPlugins ?? [];
      this.skipPermissions = !!got.skipPermissions;
      this.pending = new Map((got.pending ?? []).map((c: PendingConfirmation) => [c.id, c]));
    } catch {}
  }
}

export const store = new Store();
