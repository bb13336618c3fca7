/**
 * The server process is killed with SIGKILL while the real extension is connected and a call is
 * running, then started again on the same port (as `opentabs start`, a separate process). The
 * caller of the running call loses its HTTP connection (nothing of the server is left to answer);
 * the extension sees the socket go and says so (status and side panel text); the new server
 * starts over what the killed one left behind (server.pid, server.json); the extension
 * reconnects on its own within its backoff cap, and calls work again.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';
import { CHROMIUM, waitUntil } from '../harness/browser.ts';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { MAIN, ROOT, cliEnv, collect, killPid } from '../integration/cli-support.ts';
import { RECONNECT_MAX_DELAY_MS } from '../../server/protocol/limits.ts';

const root = mkdtempSync(join(tmpdir(), 'opentabs-kill9-'));
const cfg = join(root, 'cfg');
const profile = join(root, 'profile');
let port = 0;
let context: BrowserContext | null = null;
const started: number[] = [];
let secret = '';
let fixtures: ReturnType<typeof Bun.serve> | null = null;

async function startServer(): Promise<number> {
  const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', String(port)], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  started.push(proc.pid);
  const out = collect(proc.stdout);
  const m = await out.until(/listening on (http:\/\/127\.0\.0\.1:(\d+))/, 60_000);
  if (!m) throw new Error(`the server did not start: ${out.text()}`);
  port = Number(m[2]);
  return proc.pid;
}

const base = () => `http://127.0.0.1:${port}`;
async function health(): Promise<any> {
  try {
    const r = await fetch(`${base()}/health`, { headers: { Authorization: `Bearer ${secret}` } });
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}
async function callTool(name: string, args: Record<string, unknown> = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(`${base()}/tools/${name}/call`, { method: 'POST', headers: { Authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ arguments: args }) });
  return { status: r.status, body: await r.json() };
}
async function worker(): Promise<Worker> {
  return context!.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://')) ?? (await context!.waitForEvent('serviceworker', { timeout: 15_000 }));
}

beforeAll(async () => {
  await ensureExtensionBuilt();
  fixtures = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>Kill</title><p>kill test</p>', { headers: { 'content-type': 'text/html' } }) });
  mkdirSync(cfg, { recursive: true });
  writeFileSync(join(cfg, 'config.json'), JSON.stringify({ schemaVersion: 1, localPlugins: [], permissions: {}, pluginSettings: {} }));
  await startServer();
  secret = JSON.parse(readFileSync(join(cfg, 'extension', 'auth.json'), 'utf8')).secret;
  const ext = join(cfg, 'extension');
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--disable-extensions-except=${ext}`, `--load-extension=${ext}`, '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  await waitUntil(async () => (await health())?.extensionConnected === true, 'the extension to connect', 30_000);
}, 120_000);

afterAll(async () => {
  await context?.close().catch(() => {});
  fixtures?.stop(true);
  for (const pid of started) await killPid(pid).catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

describe('the server is killed -9 and started again', () => {
  test('the running call loses its connection; the extension says so, reconnects to the new server, and calls work', async () => {
    const page = await context!.newPage();
    const url = `http://127.0.0.1:${fixtures!.port}/kill`;
    await page.goto(url);
    const first = await callTool('browser_list_tabs');
    expect(first.status).toBe(200);
    const tabId = (first.body.result.tabs as { id: number; url: string }[]).find((t) => t.url === url)!.id;

    const running = callTool('browser_wait_for', { tabId, text: 'text-that-never-appears', timeoutMs: 25_000 }).then(
      (r) => ({ answered: r }),
      (err: Error) => ({ lost: err }),
    );
    await Bun.sleep(300); // the call on its way (no assertion rests on this)
    const pid = Number(readFileSync(join(cfg, 'server.pid'), 'utf8').trim().split(/\s/)[0]) || started[0]!;
    process.kill(pid, 'SIGKILL');
    const outcome = await running;
    expect(JSON.stringify(outcome)).not.toContain('answered');

    const w = await worker();
    const state = await waitUntil(
      () => w.evaluate(() => {
        const s = (globalThis as any).__opentabs.conn.state;
        return s.status === 'disconnected' ? s : null;
      }),
      'the extension to see the server go',
    );
    expect(['closed', 'server_not_running']).toContain(state.reason);
    expect(String(state.detail)).toMatch(/Connection closed|could not be opened|not running|reconnecting/i);
    // What the killed server left behind does not keep the new one from starting.
    expect(existsSync(join(cfg, 'server.pid'))).toBe(true);
    await startServer();
    await waitUntil(async () => (await health())?.extensionConnected === true, `the extension to reconnect (backoff cap ${RECONNECT_MAX_DELAY_MS} ms)`, 20_000);
    const after = await waitUntil(async () => {
      const r = await callTool('browser_list_tabs');
      return r.status === 200 ? r : null;
    }, 'a call after the restart');
    expect((after.body.result.tabs as { id: number }[]).some((t) => t.id === tabId)).toBe(true);
    const waited = await callTool('browser_wait_for', { tabId, text: 'kill test', timeoutMs: 5_000 });
    expect(waited.status).toBe(200);
    await page.close();
  }, 120_000);
});
