/**
 * The server process is stopped for 40 s (SIGSTOP, as a laptop's sleep or a debugger stops it)
 * and continued (SIGCONT), with the real extension connected, an MCP client (the official SDK) in
 * session and a call of it running. While the server is stopped the extension notices on its own
 * (its keepalive ping goes unanswered) and says so, and keeps retrying; once the server runs
 * again the running call gets the tool's own answer, which was waiting in the socket (it used to
 * get the server's dispatch timeout, whose timer fired first, saying the page may be stuck); a
 * call the client sent while the server was stopped waits for the extension to reconnect and
 * answers (it used to be told the extension was not connected, to open Chrome); the same MCP
 * session's next call works.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Worker } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CHROMIUM, waitUntil } from '../harness/browser.ts';
import { connectMcp } from '../harness/fake-extension.ts';
import { ensureExtensionBuilt } from '../../extension/build.ts';
import { MAIN, ROOT, cliEnv, collect, killPid } from '../integration/cli-support.ts';

const root = mkdtempSync(join(tmpdir(), 'opentabs-sleep-'));
const cfg = join(root, 'cfg');
const profile = join(root, 'profile');
let port = 0;
let context: BrowserContext | null = null;
let serverPid = 0;
let stopped = false;
let secret = '';
let fixtures: ReturnType<typeof Bun.serve> | null = null;
let mcp: Client | null = null;

async function startServer(): Promise<void> {
  const proc = Bun.spawn([process.execPath, MAIN, 'start', '--port', String(port)], { cwd: ROOT, env: cliEnv(cfg), stdout: 'pipe', stderr: 'pipe' });
  const out = collect(proc.stdout);
  const m = await out.until(/listening on (http:\/\/127\.0\.0\.1:(\d+))/, 60_000);
  if (!m) throw new Error(`the server did not start: ${out.text()}`);
  port = Number(m[2]);
  serverPid = Number(readFileSync(join(cfg, 'server.pid'), 'utf8').trim().split(/\s/)[0]) || proc.pid;
}
const base = () => `http://127.0.0.1:${port}`;
async function health(): Promise<any> {
  try {
    const r = await fetch(`${base()}/health`, { headers: { Authorization: `Bearer ${secret}` }, signal: AbortSignal.timeout(5_000) });
    return r.ok ? await r.json() : null;
  } catch {
    return null;
  }
}
async function worker(): Promise<Worker> {
  return context!.serviceWorkers().find((w) => w.url().startsWith('chrome-extension://')) ?? (await context!.waitForEvent('serviceworker', { timeout: 15_000 }));
}

beforeAll(async () => {
  await ensureExtensionBuilt();
  fixtures = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('<!doctype html><title>Sleep</title><p>sleep test</p>', { headers: { 'content-type': 'text/html' } }) });
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
  mcp = await connectMcp(base(), secret);
}, 120_000);

afterAll(async () => {
  if (stopped) process.kill(serverPid, 'SIGCONT');
  await mcp?.close().catch(() => {});
  await context?.close().catch(() => {});
  fixtures?.stop(true);
  await killPid(serverPid).catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

describe('the server is stopped for 40 s and continued', () => {
  test('the extension says so while it is stopped; after, the running call gets its own answer, the extension reconnects, the session works', async () => {
    const page = await context!.newPage();
    await page.goto(`http://127.0.0.1:${fixtures!.port}/sleep`);
    const tabs = await mcp!.callTool({ name: 'browser_list_tabs', arguments: {} });
    const tabId = (JSON.parse((tabs.content as any)[0].text).tabs as { id: number; url: string }[]).find((t) => t.url.endsWith('/sleep'))!.id;
    // Ends on its own after 25 s (the text never appears), while the server is stopped.
    const running = mcp!.callTool({ name: 'browser_wait_for', arguments: { tabId, text: 'never-there', timeoutMs: 25_000 } }, undefined, { timeout: 180_000 });
    const w = await worker();
    await Bun.sleep(500); // the call on its way (no assertion rests on this)

    process.kill(serverPid, 'SIGSTOP');
    stopped = true;
    const stoppedAt = performance.now();
    const state = await waitUntil(
      () => w.evaluate(() => {
        const s = (globalThis as any).__opentabs.conn.state;
        return s.status === 'disconnected' ? s : null;
      }),
      'the extension to notice the stopped server',
      60_000,
      250,
    );
    expect(String(state.detail)).toMatch(/did not answer a ping/);
    // A call sent while the server is stopped waits in the socket's queue.
    const duringStop = mcp!.callTool({ name: 'browser_list_tabs', arguments: {} }, undefined, { timeout: 180_000 }).then(
      (r) => ({ r }),
      (e: Error) => ({ e: e.message }),
    );
    const rest = 40_000 - (performance.now() - stoppedAt);
    if (rest > 0) await Bun.sleep(rest);
    process.kill(serverPid, 'SIGCONT');
    stopped = false;

    const answer = (await running) as { isError?: boolean; content: { text: string }[] };
    expect(answer.isError).toBe(true);
    expect(answer.content[0]!.text).toContain('never-there');
    expect(answer.content[0]!.text).not.toMatch(/without progress/);
    const during = (await duringStop) as { r?: { isError?: boolean; content: { text: string }[] }; e?: string };
    // Answered once the extension is back (it reconnects within its backoff cap): not "not connected".
    expect(during.r?.isError).toBeFalsy();
    expect(during.r?.content[0]!.text).toContain('/sleep');

    await waitUntil(async () => (await health())?.extensionConnected === true, 'the extension to reconnect', 60_000);
    const after = (await mcp!.callTool({ name: 'browser_list_tabs', arguments: {} })) as { isError?: boolean; content: { text: string }[] };
    expect(after.isError).toBeFalsy();
    expect(after.content[0]!.text).toContain('/sleep');
    await page.close();
  }, 300_000);
});
