/**
 * Integration-test harness: the real server in-process on port 0 with a fresh temp config dir.
 *
 *   const srv = await startTestServer({ limits: { adminRate: { max: 2, windowMs: 60_000 } } });
 *   try { await fetch(`${srv.url}/health`, { headers: srv.auth }) } finally { await srv.stop() }
 *
 * Defaults: installExtension false, quiet. Waits for start-up discovery before resolving.
 * When the caller passes `configDir`, that directory is the caller's to remove (so a test can
 * restart a server on the same state); otherwise stop() removes the temp dir.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerContext, ServerOptions } from '../../server/context.ts';
import type { MemoryKeeper } from '../../server/state/memory.ts';
import { startServer } from '../../server/serve.ts';

export interface TestServer {
  url: string;
  port: number;
  /** The bearer secret ('' only if the server runs without one). */
  secret: string;
  configDir: string;
  ctx: ServerContext;
  /** The client token (<configDir>/client-token.json): what MCP client configs hold. */
  clientToken: string;
  /** `{ Authorization: 'Bearer <secret>' }` for fetch: what the CLI sends. */
  auth: Record<string, string>;
  /** `{ Authorization: 'Bearer <client token>' }`: what an MCP client's config holds. */
  client: Record<string, string>;
  /** The server's memory keeper (collections and quiet-spell releases it ran). */
  memory: MemoryKeeper;
  stop(): Promise<void>;
}

/** A fresh temp dir for a config dir (caller removes it, e.g. with removeDir). */
export function makeTempConfigDir(prefix = 'opentabs-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export async function startTestServer(opts: Partial<ServerOptions> = {}): Promise<TestServer> {
  const ownsDir = opts.configDir === undefined;
  const configDir = opts.configDir ?? makeTempConfigDir();
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer({ installExtension: false, quiet: true, ...opts, port: opts.port ?? 0, configDir });
  } catch (err) {
    if (ownsDir) removeDir(configDir);
    throw err;
  }
  await running.ready;
  const secret = running.ctx.secret ?? '';
  let stopped = false;
  return {
    url: running.url,
    port: running.port,
    secret,
    configDir,
    ctx: running.ctx,
    clientToken: running.ctx.clientToken ?? '',
    auth: { Authorization: `Bearer ${secret}` },
    client: { Authorization: `Bearer ${running.ctx.clientToken ?? ''}` },
    memory: running.memory,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await running.stop();
      } finally {
        if (ownsDir) removeDir(configDir);
      }
    },
  };
}
