/**
 * Chrome frozen (SIGSTOP, as a laptop's sleep or a hung browser does) while an agent calls a tool
 * that changes something: browser_navigate_tab to a URL whose loads the fixture server counts.
 * The call's frame waits in the socket's buffer while Chrome is stopped. Whole browser stopped:
 * the server drops the silent socket and tells the agent to retry; only the extension's process
 * stopped (a hung worker; Chrome's network process still answers pings): the call waits. Either
 * way, when Chrome runs again the frame it finds is not run (it used to be: the navigation
 * happened after the agent was told the call failed, and once more when it retried); the retry
 * runs once.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { LATE_CALL_MS } from '../../extension/background/connection.ts';

let h: BrowserHarness;
/** Query strings of the loads of /hit, in order. */
const hits: string[] = [];
let frozen: number[] = [];

function processes(): { pid: number; args: string[] }[] {
  const out: { pid: number; args: string[] }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      out.push({ pid: Number(d), args: readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0') });
    } catch {}
  }
  return out;
}
const groupOf = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[2];

/**
 * This test's browser: its main process, every process of its process group (renderers, network,
 * GPU) and the extension's renderer (Chrome rewrites its children's command lines into one string).
 */
function browser(): { main: number; all: number[]; extension: number[] } {
  const all = processes();
  const main = all.find((p) => p.args.includes(`--load-extension=${join(h.configDir, 'extension')}`) && !p.args.some((a) => a.startsWith('--type=')) && p.args[0]!.endsWith('/chromium'));
  if (!main) throw new Error('the browser process of this test was not found');
  const group = groupOf(main.pid);
  const members = all.filter((p) => {
    try {
      return groupOf(p.pid) === group;
    } catch {
      return false;
    }
  });
  return { main: main.pid, all: members.map((p) => p.pid), extension: members.filter((p) => / --extension-process( |$)/.test(p.args.join(' '))).map((p) => p.pid) };
}
function freeze(pids: number[]): void {
  frozen = pids;
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
}
function thaw(): void {
  for (const pid of frozen) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {}
  }
  frozen = [];
}

beforeAll(async () => {
  h = await startBrowserHarness({
    routes: (req) => {
      const u = new URL(req.url);
      if (u.pathname !== '/hit') return undefined;
      hits.push(u.search);
      return new Response('<!doctype html><title>Hit</title><p>hit</p>', { headers: { 'content-type': 'text/html' } });
    },
  });
}, 120_000);

afterAll(async () => {
  thaw();
  await h?.stop();
});

/** Connected again, and a round trip through the new socket: whatever Chrome found buffered has been handled. */
async function backAndSettled(): Promise<void> {
  await h.waitForHealth((x) => x.extensionConnected === true, 'the extension to reconnect', 60_000);
  await waitUntil(async () => (await h.callTool('browser_list_tabs')).status === 200, 'a call to answer after the thaw', 30_000);
}

describe('Chrome frozen while a call is sent', () => {
  test('the whole browser stopped: the call fails naming the silent connection; after the thaw it does not run, the retry runs once', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    hits.length = 0;

    freeze(browser().all);
    const r = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/hit?call=1') });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toMatch(/stopped answering/);
    // The frame is older than LATE_CALL_MS when Chrome reads it (the server waited at least that long for a pong).
    thaw();

    await backAndSettled();
    expect(hits).toEqual([]);
    const again = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/hit?call=2') });
    expect(again.status).toBe(200);
    expect(hits).toEqual(['?call=2']);
    await page.close();
  }, 180_000);

  test("only the extension's process stopped: the call waiting on it ends when it runs again, saying it was not run", async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    hits.length = 0;

    const ext = browser().extension;
    expect(ext.length).toBe(1);
    freeze(ext);
    const sent = Date.now();
    const running = h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/hit?call=3') });
    // Longer than LATE_CALL_MS, shorter than the server's 30 s dispatch timeout (Chrome's network process answers the server's pings).
    await Bun.sleep(LATE_CALL_MS + 3_000 - (Date.now() - sent));
    thaw();
    const r = await running;
    expect(r.status).not.toBe(200);
    expect(r.body.error.code).toBe('extension_not_connected');
    expect(r.body.error.message).toMatch(/browser_navigate_tab reached the browser \d+ s after it was sent .* not run/);

    await backAndSettled();
    expect(hits).toEqual([]);
    const again = await h.callTool('browser_navigate_tab', { tabId, url: h.fixtureUrl('/hit?call=4') });
    expect(again.status).toBe(200);
    expect(hits).toEqual(['?call=4']);
    await page.close();
  }, 180_000);
});
