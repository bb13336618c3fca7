/**
 * Process lifecycle: build the context, bind the port (before any plugin work), then discover
 * plugins in the background; clean shutdown on SIGINT/SIGTERM.
 */
import { join } from 'node:path';
import { DEFAULT_LIMITS, DEFAULT_PORT, EXTENSION_INSTALL_DELAY_MS, HOST, SHUTDOWN_FLUSH_MS, SHUTDOWN_GRACE_MS, WS_MAX_PAYLOAD_BYTES, type Limits } from './limits.ts';
import type { ReloadResult, ServerContext, ServerOptions } from './context.ts';
import { createApp } from './app.ts';
import { directToolCall } from './routes/tool-call-direct.ts';
import { ensureStateDirs, resolveConfigDir } from './state/paths.ts';
import { loadOrCreateClientToken, loadOrCreateSecret } from './state/secret.ts';
import { ConfigStore } from './state/config.ts';
import { AuditLog } from './state/audit.ts';
import { ServerLog } from './state/server-log.ts';
import { claimPidFile, releasePidFile, type PidRecord } from './state/pid-file.ts';
import { PluginManager } from './plugins/manager.ts';
import { CatalogStore } from './tools/catalog.ts';
import { followPluginChanges } from './plugin-events.ts';
import { ExtensionHub } from './hub/hub.ts';
import { McpSessions } from './mcp/sessions.ts';
import { authState } from './middleware/auth.ts';
import { InFlightCalls } from './tools/in-flight.ts';
import { ConcurrencyGate } from './tools/gate.ts';
import { startMemoryKeeper, type MemoryKeeper } from './state/memory.ts';
import { manifestCacheWritten } from './plugins/schema-cache.ts';
import { importFromSource } from './source-dir.ts';
import { clearUploadStaging, startUploadStagingSweeper } from './tools/upload-staging.ts';

export interface RunningServer {
  ctx: ServerContext;
  port: number;
  url: string;
  /** Resolves when discovery at start-up has finished. */
  ready: Promise<void>;
  /** Full collections under load and after it, memory given back after a quiet spell (server/state/memory.ts); the bench can stop it to compare. */
  memory: MemoryKeeper;
  stop(): Promise<void>;
  /** Settles once stop() has finished: `opentabs start` runs until then. */
  stopped: Promise<void>;
}

export function defaultServerOptions(partial: Partial<ServerOptions> = {}): ServerOptions {
  return {
    ...partial,
    // The CLI resolves --port / PORT; a caller that passes nothing gets the documented default.
    port: partial.port ?? DEFAULT_PORT,
    configDir: partial.configDir ?? resolveConfigDir(),
  };
}

function assertPort(port: unknown): asserts port is number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid port ${JSON.stringify(port)}: expected an integer from 0 to 65535 (0 picks a free port)`);
  }
}

export async function startServer(partial: Partial<ServerOptions> = {}): Promise<RunningServer> {
  const options = defaultServerOptions(partial);
  assertPort(options.port);
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const configDir = options.configDir;
  await ensureStateDirs(configDir);

  const log = new ServerLog(join(configDir, 'server.log'));
  log.assertWritable();
  const secret = await loadOrCreateSecret(configDir);
  const clientToken = await loadOrCreateClientToken(configDir);
  const config = await ConfigStore.open(configDir);
  // The audit files' last-24-hours count is rebuilt once the tools are listed (it can be a 20 MB scan).
  let toolsListed!: () => void;
  const listedOrFailed = new Promise<void>((resolve) => (toolsListed = resolve));
  const audit = await AuditLog.open(configDir, limits.auditRotateBytes, undefined, listedOrFailed);
  if (config.lastLoadError) log.warn('config_reset', { error: config.lastLoadError });

  // The parts, in dependency order (server/deps.ts). The hub and the MCP sessions take the
  // finished context and are made right after it; its getters read them from then on.
  const plugins = new PluginManager({ config, configDir, log });
  const catalog = new CatalogStore({ config, plugins, log });
  const calls = new InFlightCalls();
  const gate = new ConcurrencyGate();
  let hub: ExtensionHub | undefined;
  let mcp: McpSessions | undefined;
  const made = <T>(part: T | undefined, name: string): T => {
    if (part === undefined) throw new Error(`server context: ${name} used while it is being made`);
    return part;
  };

  let reloading: Promise<ReloadResult> | null = null;
  const ctx: ServerContext = {
    options,
    limits,
    configDir,
    startedAt: Date.now(),
    mode: options.dev ? 'dev' : 'production',
    plugins,
    catalog,
    calls,
    gate,
    get hub() {
      return made(hub, 'the extension hub');
    },
    get mcp() {
      return made(mcp, 'the MCP sessions');
    },
    port: 0,
    secret,
    clientToken,
    config,
    audit,
    log,
    reloadCount: 0,
    lastReloadTimestamp: 0,
    lastReloadDurationMs: 0,
    reload(): Promise<ReloadResult> {
      // Concurrent callers share one reload.
      reloading ??= (async () => {
        const t0 = performance.now();
        try {
          const previousSecret = ctx.secret;
          const previousToken = ctx.clientToken;
          ctx.secret = await loadOrCreateSecret(configDir);
          ctx.clientToken = await loadOrCreateClientToken(configDir);
          // A rotated secret takes the server away from whoever holds the old one: the extension's
          // socket, and the MCP sessions and streams opened with it (a session's GET stream, a legacy
          // SSE session, subscriptions/listen), which would go on hearing plugin log lines and tool
          // list changes. Clients given the new secret start new sessions.
          if (previousSecret !== ctx.secret) ctx.hub.dropForSecretRotation();
          if (previousSecret !== ctx.secret || previousToken !== ctx.clientToken) await ctx.mcp.closeAll();
          await ctx.config.reload();
          await ctx.plugins.discover();
          ctx.catalog.rebuild();
          const durationMs = Math.round(performance.now() - t0);
          ctx.reloadCount++;
          ctx.lastReloadTimestamp = Date.now();
          ctx.lastReloadDurationMs = durationMs;
          ctx.log.info('reload', { plugins: ctx.plugins.list().length, durationMs });
          return { ok: true as const, plugins: ctx.plugins.list().length, durationMs };
        } finally {
          reloading = null;
        }
      })();
      return reloading;
    },
  };
  hub = new ExtensionHub(ctx);
  // The user's own budget of new sessions and listen streams goes to requests with the secret.
  mcp = new McpSessions(ctx, (req) => authState(ctx, req.headers.get('authorization')) === 'valid');
  followPluginChanges(ctx);

  const app = createApp(ctx);
  // REST and MCP tool calls skip Hono's router (same checks, same answers; see tool-call-direct.ts).
  const direct = directToolCall(ctx);
  const memory = startMemoryKeeper(undefined, limits.memoryReleaseIdleMs);
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: HOST,
      port: options.port,
      // Body size is enforced by our middleware (a JSON 413 by Content-Length before reading, or
      // while streaming a chunked body, so nothing above the limit is buffered). Bun's own cap
      // would answer first with a bare 413, so it is set out of the way.
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      // Silent connections are closed; bearerAuth lifts this for authenticated (possibly long) requests.
      idleTimeout: limits.httpIdleTimeoutSeconds,
      fetch: (req, srv) => (memory.touch(), direct(req, srv) ?? app.fetch(req, { server: srv })),
      websocket: ctx.hub.websocketHandlers({ maxPayloadLength: WS_MAX_PAYLOAD_BYTES }),
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    const message =
      code === 'EADDRINUSE' || /in use/i.test(String((err as Error)?.message))
        ? `Port ${options.port} on ${HOST} is already in use (another OpenTabs server? try \`opentabs status\`, or pick another with --port)`
        : `Cannot listen on ${HOST}:${options.port}: ${(err as Error)?.message ?? err}`;
    log.error('listen_failed', { port: options.port, error: message });
    toolsListed();
    memory.stop();
    await ctx.mcp.closeAll().catch(() => {});
    ctx.hub.closeAll('server failed to start');
    await audit.close();
    throw new Error(message);
  }
  ctx.port = server.port ?? options.port;
  const url = `http://${HOST}:${ctx.port}`;

  // Claimed, not just written: of two servers of this config dir started at the same moment (on
  // other ports), the second finds the first alive here and stops (server/state/pid-file.ts).
  const pidRecord: PidRecord = { pid: process.pid, port: ctx.port, startedAt: ctx.startedAt };
  const holder = await claimPidFile(configDir, pidRecord, secret);
  if (holder) {
    const message =
      `Another OpenTabs server of config dir ${configDir} is already running on http://${HOST}:${holder.port} (pid ${holder.pid}); it started at the same moment as this one, which stops. ` +
      'Use that one, or stop it first (`opentabs stop`).';
    log.error('already_running', { pid: holder.pid, port: holder.port });
    server.stop(true);
    toolsListed();
    memory.stop();
    await ctx.mcp.closeAll().catch(() => {});
    ctx.hub.closeAll('server failed to start');
    await audit.close();
    await log.flush();
    throw new Error(message);
  }
  log.info('listening', { url, pid: process.pid, mode: ctx.mode });
  // Only once the pid file is ours: a second server of the config dir must not touch the first's copies.
  const staging = startUploadStagingSweeper(configDir, (err) => log.warn('upload_staging_sweep_failed', { error: String((err as Error)?.message ?? err) }));
  if (!options.quiet) console.log(`OpenTabs server listening on ${url}`);

  // Listen first: plugin discovery, the catalog and the extension folder come after the bind and
  // the pid file (started before it, discovery's file reads queue ahead of the pid file's and
  // /health answers later). The extension folder comes after the catalog, so that the install's
  // work (loading the extension build, which may rebuild the extension with esbuild; hashing and
  // copying its files) never delays the tool list. It never touches adapters/, which is all
  // discovery writes there.
  const ready = (async () => {
    try {
      await ctx.plugins.discover({ pruneLater: true });
      ctx.catalog.rebuild();
      if (ctx.mode === 'dev') ctx.plugins.startWatching();
    } catch (err) {
      log.error('startup_discovery_failed', { error: String((err as Error)?.message ?? err) });
    }
    toolsListed();
    if (options.installExtension === false) return;
    try {
      await Bun.sleep(EXTENSION_INSTALL_DELAY_MS);
      // Imported here, after the bind: it pulls in the extension build (esbuild's JS API),
      // ≈ 20–30 ms of module evaluation nothing before the port needs. Always from source.
      const { installExtension } = await importFromSource<typeof import('./extension-install.ts')>('extension-install.ts');
      await installExtension(ctx);
    } catch (err) {
      log.error('extension_install_failed', { error: String((err as Error).message) });
    }
  })();

  let stopping = false;
  let markStopped!: () => void;
  const stopped = new Promise<void>((resolve) => (markStopped = resolve));
  async function stop() {
    if (stopping) return stopped;
    stopping = true;
    try {
      await stopSteps();
    } finally {
      // Settled even when a step throws: `opentabs start` waits on it (cli/commands/start.ts).
      markStopped();
    }
  }
  async function stopSteps() {
    log.info('stopping', {});
    // Each step runs even if an earlier one fails: the pid file must go and the audit log must flush.
    const step = async (name: string, fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        log.error('stop_step_failed', { step: name, error: String((err as Error)?.message ?? err) });
      }
    };
    // Callers first: refuse new calls, end the running ones (extension dispatches, approval waits)
    // with server_shutting_down, and give their answers time to reach the clients (bounded);
    // only then close MCP sessions, the extension's socket and the remaining connections.
    ctx.calls.stopping = true;
    await step('hub', () => ctx.hub.closeAll('server shutting down'));
    await step('drain', async () => {
      await ctx.calls.drained(SHUTDOWN_GRACE_MS);
      await Bun.sleep(SHUTDOWN_FLUSH_MS);
    });
    await step('mcp', () => ctx.mcp.closeAll());
    await step('http', async () => {
      // Graceful first (requests still being answered finish), forced after the grace period.
      const graceful = server.stop(false);
      const finished = await Promise.race([graceful.then(() => true), Bun.sleep(SHUTDOWN_GRACE_MS).then(() => false)]);
      if (!finished) await server.stop(true);
    });
    await step('watcher', () => ctx.plugins.stopWatching());
    // Pages lose the files they were given from now on: no server keeps the copies any more.
    staging.stop();
    await step('upload staging', () => clearUploadStaging(configDir));
    memory.stop();
    await step('ready', () => ready);
    await step('manifest cache', () => manifestCacheWritten());
    await step('audit', () => ctx.audit.close());
    releasePidFile(configDir, pidRecord);
    log.info('stopped', {});
    await log.flush();
  }

  return { ctx, port: ctx.port, url, ready, memory, stop, stopped };
}

/** `opentabs start` in the foreground: run until SIGINT/SIGTERM. */
export async function runForeground(partial: Partial<ServerOptions> = {}): Promise<RunningServer> {
  const running = await startServer(partial);
  const onSignal = async (sig: string) => {
    running.ctx.log.info('signal', { signal: sig });
    let code = 0;
    try {
      await running.stop();
    } catch (err) {
      running.ctx.log.error('stop_failed', { error: String((err as Error)?.message ?? err) });
      code = 1;
    }
    process.exit(code);
  };
  process.once('SIGINT', () => void onSignal('SIGINT'));
  process.once('SIGTERM', () => void onSignal('SIGTERM'));
  return running;
}
