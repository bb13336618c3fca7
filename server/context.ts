/**
 * The whole server as one object: serve.ts builds it once (the composition root) and the HTTP
 * routes receive it. The parts themselves never import this type: each names what it needs
 * (CoreDeps in deps.ts, HubDeps, CallDeps, McpDeps), which this object satisfies, so no import
 * runs in a circle.
 *
 * Ownership (one module per part):
 *   state/     ConfigStore, secret, AuditLog, ServerLog
 *   plugins/   PluginManager (discovery, install, settings, watcher, adapter files)
 *   tools/     CatalogStore (immutable catalog snapshots) and callTool() — the one call path
 *   hub/       ExtensionHub (the /ws connection, JSON-RPC, dispatch, confirmations)
 *   mcp/       McpSessions (Streamable HTTP sessions for /mcp and /mcp/gateway)
 */
import type { CoreDeps } from './deps.ts';
import type { ExtensionHub } from './hub/hub.ts';
import type { McpSessions } from './mcp/sessions.ts';

export type { ServerOptions, ReloadResult } from './deps.ts';
import type { ReloadResult } from './deps.ts';

export interface ServerContext extends CoreDeps {
  readonly startedAt: number;
  readonly mode: 'dev' | 'production';
  /** Port actually bound (known after listen). */
  port: number;
  /** Bearer secret; replaced on reload after `opentabs config rotate-secret`. */
  secret: string | null;
  /**
   * Client token (<config dir>/client-token.json), what MCP client configs hold: accepted as
   * `Bearer` by MCP, tool calls and the read-only routes, refused (403 client_token_not_allowed)
   * by the rest. Unset: only the secret is accepted. Replaced on reload like the secret.
   */
  clientToken?: string | null;
  readonly hub: ExtensionHub;
  readonly mcp: McpSessions;
  /** Reload stats for /health. */
  reloadCount: number;
  lastReloadTimestamp: number;
  lastReloadDurationMs: number;
  /** Rediscover config, secret and plugins; concurrent callers share one run. */
  reload(): Promise<ReloadResult>;
}
