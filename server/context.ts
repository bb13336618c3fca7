/**
 * The server's parts and how they reach each other. `createServerContext` (serve.ts) builds one
 * of these; routers and subsystems receive it instead of importing singletons, so tests can run
 * several servers in one process.
 *
 * Ownership (one module per part):
 *   state/     ConfigStore, secret, AuditLog, ServerLog
 *   plugins/   PluginManager (discovery, install, settings, watcher, adapter files)
 *   tools/     CatalogStore (immutable catalog snapshots) and callTool() — the one call path
 *   hub/       ExtensionHub (the /ws connection, JSON-RPC, dispatch, confirmations)
 *   mcp/       McpSessions (Streamable HTTP sessions for /mcp and /mcp/gateway)
 */
import type { InFlightCalls } from './tools/in-flight.ts';
import type { ConcurrencyGate } from './tools/gate.ts';
import type { Limits } from './limits.ts';
import type { ConfigStore } from './state/config.ts';
import type { AuditLog } from './state/audit.ts';
import type { ServerLog } from './state/server-log.ts';
import type { PluginManager } from './plugins/manager.ts';
import type { CatalogStore } from './tools/catalog.ts';
import type { ExtensionHub } from './hub/hub.ts';
import type { McpSessions } from './mcp/sessions.ts';

export interface ServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** State directory (default ~/.opentabs or OPENTABS_CONFIG_DIR). */
  configDir: string;
  /** `opentabs start --dev`: watch local plugins. */
  dev?: boolean;
  /** Test overrides of named limits (server/limits.ts). Never read from user config. */
  limits?: Partial<Limits>;
  /** Install the built extension into <configDir>/extension (default true). */
  installExtension?: boolean;
  /** OPENTABS_DANGEROUSLY_SKIP_PERMISSIONS; defaults to the env var. */
  skipPermissions?: boolean;
  /** Print lifecycle lines (URL bound etc.) to stdout. */
  quiet?: boolean;
}

export interface ReloadResult {
  ok: true;
  plugins: number;
  durationMs: number;
}

export interface ServerContext {
  readonly options: ServerOptions;
  readonly limits: Limits;
  readonly configDir: string;
  readonly startedAt: number;
  readonly mode: 'dev' | 'production';
  /** Port actually bound (known after listen). */
  port: number;
  /** Bearer secret; replaced on reload after `opentabs config rotate-secret`. */
  secret: string | null;
  readonly config: ConfigStore;
  readonly audit: AuditLog;
  readonly log: ServerLog;
  readonly plugins: PluginManager;
  readonly catalog: CatalogStore;
  readonly hub: ExtensionHub;
  readonly mcp: McpSessions;
  /** Calls in flight per plugin (and per page-tool origin): the too_many_in_flight limit. */
  readonly gate: ConcurrencyGate;
  /** Tool calls in flight; `stopping` once shutdown began (new calls are refused). */
  readonly calls: InFlightCalls;
  /** Reload stats for /health. */
  reloadCount: number;
  lastReloadTimestamp: number;
  lastReloadDurationMs: number;
  /** Rediscover config, secret and plugins; concurrent callers share one run. */
  reload(): Promise<ReloadResult>;
}
