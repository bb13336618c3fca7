/**
 * The server's parts as the others depend on them, in layers so no import runs in a circle:
 * CoreDeps are the parts that depend on no other part's type (state, plugins, catalog, call
 * bookkeeping); the hub, the call path and MCP each name what they need on top of these
 * (server/hub/types.ts, tools/call.ts, mcp/deps.ts). serve.ts builds one object that has all of
 * it (ServerContext, context.ts) and hands it to each part, typed by that part's own needs.
 */
import type { Limits } from './limits.ts';
import type { ConfigStore } from './state/config.ts';
import type { AuditLog } from './state/audit.ts';
import type { ServerLog } from './state/server-log.ts';
import type { PluginManager } from './plugins/manager.ts';
import type { CatalogStore } from './tools/catalog.ts';
import type { InFlightCalls } from './tools/in-flight.ts';
import type { ConcurrencyGate } from './tools/gate.ts';

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

export interface CoreDeps {
  readonly options: ServerOptions;
  readonly limits: Limits;
  readonly configDir: string;
  readonly config: ConfigStore;
  readonly audit: AuditLog;
  readonly log: ServerLog;
  readonly plugins: PluginManager;
  readonly catalog: CatalogStore;
  /** Calls in flight per plugin (and per page-tool origin): the too_many_in_flight limit. */
  readonly gate: ConcurrencyGate;
  /** Tool calls in flight; `stopping` once shutdown began (new calls are refused). */
  readonly calls: InFlightCalls;
}
