/**
 * Attacks on the extension's own pages and on the secret, performed the way an agent could: only
 * REST tool calls (h.callTool). Pages an agent cannot open itself (an extension page, a file in
 * the config folder, chrome://version) are opened with Playwright, as the user could have.
 *
 * Every response of the file is collected and checked for the bearer secret at the end.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';
import { runCli } from '../integration/cli-support.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let fileDir = '';
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

const expectRefused = (r: ToolCallResult, what: string): void => expectPageRefused(r, what, /Tools may not (open|use)/);

/** Chrome's tab id of a page, read in the worker (list tools show refused tabs redacted). */
async function chromeTabId(page: Page): Promise<number> {
  const url = page.url();
  const worker = await h.serviceWorker();
  return waitUntil(() => worker.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? null, url), `the tab of ${url}`);
}

const configText = () => readFileSync(join(h.configDir, 'config.json'), 'utf8');
const toolPermission = async (name: string) => {
  const r = await fetch(`${h.url}/tools`, { headers: h.srv.auth });
  return ((await r.json()) as { tools: { name: string; permission: string }[] }).tools.find((t) => t.name === name)?.permission;
};

beforeAll(async () => {
  fileDir = mkdtempSync(join(tmpdir(), 'opentabs-file-page-'));
  writeFileSync(join(fileDir, 'note.html'), '<!doctype html><title>note</title><p>a local note</p>');
  h = await startBrowserHarness({
    // Everything an attacker could want is on, except the one tool that must be approved.
    permissions: { browser: { default: 'auto', tools: { browser_get_cookies: 'ask' } } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (fileDir) rmSync(fileDir, { recursive: true, force: true });
});

describe('the agent cannot open privileged pages', () => {
  test('browser_open_tab and browser_create_window refuse extension, browser, data/blob and store pages', async () => {
    const state = await call('extension_get_state');
    expect(state.status).toBe(200);
    const id = state.body.result.extensionId as string;
    const refused = [
      `chrome-extension://${id}/sidepanel.html`,
      `chrome-extension://${id}/auth.json`,
      `CHROME-EXTENSION://${id}/sidepanel.html`,
      'chrome://settings',
      'chrome://version/',
      'chrome-untrusted://terminal/',
      'devtools://devtools/bundled/inspector.html',
      `view-source:${h.fixtureUrl('/pages/index.html')}`,
      'about:settings',
      'edge://settings',
      'brave://settings',
      'data:text/html,<script>alert(1)</script>',
      'blob:http://127.0.0.1/0c1d2e3f-aaaa-bbbb-cccc-000000000000',
      'filesystem:http://127.0.0.1/temporary/x.html',
      'https://chromewebstore.google.com/detail/x/abcdefghijklmnopabcdefghijklmnop',
      'https://chrome.google.com/webstore/detail/x',
      `file://${join(h.configDir, 'extension', 'auth.json')}`,
    ];
    for (const url of refused) {
      expectRefused(await call('browser_open_tab', { url }), `open ${url}`);
      expectRefused(await call('browser_create_window', { url }), `window ${url}`);
    }
    const js = await call('browser_open_tab', { url: 'javascript:alert(1)' });
    expect(js.status).toBe(400);
    expect(js.body.error.message).toContain('javascript:');
    // Nothing was opened.
    const worker = await h.serviceWorker();
    const urls = await worker.evaluate(async () => (await chrome.tabs.query({})).map((t) => t.url || t.pendingUrl || ''));
    expect(urls.filter((u) => !u.startsWith('http') && u !== 'about:blank')).toEqual([]);
    // The allowed kinds still work.
    const ok = await call('browser_open_tab', { url: h.fixtureUrl('/pages/index.html') });
    expect(ok.status).toBe(200);
    const blank = await call('browser_open_tab', { url: 'about:blank' });
    expect(blank.status).toBe(200);
    await call('browser_close_tab', { tabId: ok.body.result.id });
    await call('browser_close_tab', { tabId: blank.body.result.id });
  });

  test('an allowed tab cannot be navigated to chrome:// or to the extension', async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/index.html'));
    const tabId = await h.tabIdOf(page);
    for (const url of ['chrome://version', `chrome-extension://${h.extensionId}/sidepanel.html`, `chrome-extension://${h.extensionId}/auth.json`, 'data:text/html,hi']) {
      expectRefused(await call('browser_navigate_tab', { tabId, url }), `navigate to ${url}`);
    }
    expect(page.url()).toBe(h.fixtureUrl('/pages/index.html'));
    await page.close();
  });

  test('history cannot lead a tool into an extension page: go_back refuses and the tab stays', async () => {
    const page = await h.context.newPage();
    await page.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    await page.goto(h.fixtureUrl('/pages/index.html'));
    try {
      const tabId = await h.tabIdOf(page);
      expectRefused(await call('browser_go_back', { tabId }), 'go_back into the extension page');
      expect(page.url()).toBe(h.fixtureUrl('/pages/index.html'));
    } finally {
      await page.close();
    }
  });
});

describe('a tab already showing a privileged page', () => {
  let panelTab: Page;
  let authTab: Page;
  let chromeTab: Page;

  beforeAll(async () => {
    panelTab = await h.context.newPage();
    await panelTab.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    authTab = await h.context.newPage();
    await authTab.goto(`chrome-extension://${h.extensionId}/auth.json`);
    chromeTab = await h.context.newPage();
    await chromeTab.goto('chrome://version');
    await h.srv.ctx.config.update((d) => {
      d.uploadFolders = [fileDir];
    });
  });

  afterAll(async () => {
    for (const p of [panelTab, authTab, chromeTab]) await p?.close().catch(() => {});
  });

  const pageTools: [string, Record<string, unknown>][] = [
    ['browser_get_tab_content', {}],
    ['browser_get_page_html', {}],
    ['browser_query_elements', { selector: 'body' }],
    ['browser_wait_for_element', { selector: 'body', timeoutMs: 1000 }],
    ['browser_snapshot', {}],
    ['browser_screenshot_tab', {}],
    ['browser_screenshot_tab', { fullPage: true }],
    ['browser_click_element', { selector: 'body' }],
    ['browser_type_text', { selector: 'body', text: 'x' }],
    ['browser_press_key', { key: 'Enter' }],
    ['browser_press_key', { key: 'Tab', modifiers: ['Shift'] }],
    ['browser_hover_element', { selector: 'body' }],
    ['browser_select_option', { selector: 'select', value: 'auto' }],
    ['browser_scroll', { direction: 'down' }],
    ['browser_execute_script', { code: 'fetch(chrome.runtime.getURL("auth.json")).then((r) => r.text())' }],
    ['browser_get_storage', {}],
    ['browser_get_console_logs', {}],
    ['browser_clear_console_logs', {}],
    ['browser_enable_network_capture', {}],
    ['browser_get_network_requests', {}],
    ['browser_get_websocket_frames', {}],
    ['browser_export_har', {}],
    ['browser_disable_network_capture', {}],
    ['browser_reload_tab', {}],
    ['browser_go_back', {}],
    ['browser_go_forward', {}],
    ['browser_focus_tab', {}],
    ['browser_get_tab_info', {}],
    ['browser_wait_for', { text: 'x', timeoutMs: 1000 }],
    ['browser_get_styles', { selector: 'body' }],
    ['browser_accessibility_audit', {}],
    ['browser_handle_dialog', {}],
    ['browser_fill_form', { fields: [{ selector: 'input', value: 'x' }] }],
    ['browser_emulate', { colorScheme: 'dark' }],
    ['browser_get_network_request', { requestId: '1' }],
    ['browser_intercept_requests', { rules: [{ urlPattern: '*', action: 'block' }] }],
    ['browser_click_at', { x: 5, y: 5 }],
    ['browser_move_mouse', { x: 5, y: 5 }],
    ['browser_drag', { sourceSelector: 'body', targetSelector: 'body' }],
    ['browser_upload_file', { selector: 'input', paths: ['<allowed file>'] }],
    ['browser_print_pdf', {}],
    ['browser_force_pseudo_state', { selector: 'body', states: ['hover'] }],
    ['browser_performance_trace', { action: 'start' }],
    ['plugin_draft_from_capture', { name: 'evil' }],
  ];

  test('every declared tool that acts on a tab is in the attack list above', async () => {
    const { BROWSER_TOOLS } = await import('../../server/tools/browser-catalog.ts');
    // Tested on their own below: closing such a tab is allowed; navigating goes through the URL checks above.
    const listed = new Set([...pageTools.map(([tool]) => tool), 'browser_close_tab', 'browser_navigate_tab']);
    const missing = BROWSER_TOOLS.filter((d) => ((d.inputSchema.required as string[] | undefined) ?? []).includes('tabId') && !listed.has(d.name)).map((d) => d.name);
    expect(missing).toEqual([]);
  });

  test('every page tool refuses the side panel page, auth.json and chrome://version', async () => {
    for (const page of [panelTab, authTab, chromeTab]) {
      const tabId = await chromeTabId(page);
      for (const [tool, args] of pageTools) {
        // The upload's file is real and in an allowed folder, so only the page can be the reason to refuse.
        const a = tool === 'browser_upload_file' ? { ...args, paths: [join(fileDir, 'note.html')] } : args;
        expectRefused(await call(tool, { tabId, ...a }), `${tool} on ${page.url()}`);
      }
    }
    // The attack did not change the page behind our back.
    expect(panelTab.url()).toBe(`chrome-extension://${h.extensionId}/sidepanel.html`);
  });

  test('the REST tabId of a call is checked too', async () => {
    const tabId = await chromeTabId(authTab);
    const r = await h.callTool('browser_list_tabs', {}, { tabId });
    responses.push(r);
    expectRefused(r, 'list_tabs with tabId of auth.json');
  });

  test('browser_list_tabs lists such tabs without their path or title', async () => {
    const r = await call('browser_list_tabs');
    expect(r.status).toBe(200);
    const tabs = r.body.result.tabs as { id: number; url: string; title: string; restricted?: string }[];
    const ext = tabs.filter((t) => t.url.startsWith('chrome-extension:'));
    expect(ext.length).toBe(2);
    for (const t of ext) {
      expect(t.url).toBe(`chrome-extension://${h.extensionId}/`);
      expect(t.title).toBe('');
      expect(t.restricted).toMatch(/extension page/);
    }
    expect(JSON.stringify(r.body)).not.toContain('auth.json');
    const windows = await call('browser_list_windows');
    expect(JSON.stringify(windows.body)).not.toContain('auth.json');
  });

  test('the tab can still be closed (and an agent may navigate a New Tab page away)', async () => {
    const page = await h.context.newPage();
    await page.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    const tabId = await chromeTabId(page);
    const nav = await call('browser_navigate_tab', { tabId, url: h.fixtureUrl('/pages/index.html') });
    expect(nav.status).toBe(200);
    expect(nav.body.result.url).toBe(h.fixtureUrl('/pages/index.html'));
    expect((await call('browser_close_tab', { tabId })).status).toBe(200);
  });
});

describe('a debugger session does not follow the tab into a refused page', () => {
  test('network capture ends when the tab goes to an extension page', async () => {
    const page = await h.context.newPage();
    try {
      await page.goto(h.fixtureUrl('/pages/index.html'));
      const tabId = await h.tabIdOf(page);
      expect((await call('browser_enable_network_capture', { tabId })).status).toBe(200);
      await page.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
      expectRefused(await call('browser_get_network_requests', { tabId }), 'read the capture on the extension page');
      await page.goto(h.fixtureUrl('/pages/index.html'));
      // Back on an allowed page: the capture is gone, nothing recorded on the extension page is kept.
      const after = await waitUntil(async () => {
        const r = await call('browser_get_network_requests', { tabId });
        return r.status !== 403 ? r : null;
      }, 'the tab allowed again');
      expect(after.body.error?.message ?? '').toContain('capture is off');
    } finally {
      await page.close();
    }
  });
});

describe('sidepanel.html in a tab is not the side panel', () => {
  test('it cannot approve a pending call or change a permission; the real side panel can approve', async () => {
    const before = configText();
    const execBefore = await toolPermission('browser_execute_script');
    const pending = h.callTool('browser_get_cookies', { url: h.fixtureUrl('/') });
    const conf = await waitUntil(() => h.srv.ctx.hub.confirmations.list()[0], 'the call to wait for approval');

    // The agent's way in: keys into the tab are refused (the tab is an extension page).
    const tab = await h.context.newPage();
    await tab.goto(`chrome-extension://${h.extensionId}/sidepanel.html`);
    const tabId = await chromeTabId(tab);
    for (const key of ['Tab', 'Enter', ' ']) expectRefused(await call('browser_press_key', { tabId, key }), `press ${key}`);

    // Even code running in that tab (more than an agent has) is not accepted as the panel.
    const outcome = await tab.evaluate(
      ({ id }) =>
        new Promise<string>((resolve) => {
          const port = chrome.runtime.connect({ name: 'opentabs-sidepanel' });
          port.onDisconnect.addListener(() => resolve('disconnected'));
          port.onMessage.addListener((m: { type: string }) => {
            if (m.type === 'state') resolve('received panel state');
          });
          try {
            port.postMessage({ type: 'confirm', id, decision: 'allow', alwaysAllow: true });
            port.postMessage({ type: 'request', id: 1, method: 'config.setSkipPermissions', params: { skip: true } });
            port.postMessage({ type: 'request', id: 2, method: 'config.setToolPermission', params: { plugin: 'browser', tool: 'browser_get_cookies', permission: 'auto' } });
            port.postMessage({ type: 'request', id: 3, method: 'config.setAllowFileUrls', params: { allow: true } });
          } catch {
            resolve('disconnected');
          }
        }),
      { id: conf.id },
    );
    expect(outcome).toBe('disconnected');
    // The page shows why instead of a working panel.
    await tab.waitForFunction(() => document.getElementById('root')?.textContent?.includes('toolbar icon'), undefined, { timeout: 15_000 });
    expect(h.srv.ctx.hub.confirmations.list().map((c) => c.id)).toEqual([conf.id]);
    expect(configText()).toBe(before);
    expect(await toolPermission('browser_execute_script')).toBe(execBefore);
    expect(await toolPermission('browser_get_cookies')).toBe('ask');
    await tab.close();

    // Control: the real side panel's approval goes through.
    const panel = await h.openSidePanel();
    await panel.evaluate(({ id }) => {
      const port = chrome.runtime.connect({ name: 'opentabs-sidepanel' });
      port.postMessage({ type: 'confirm', id, decision: 'allow' });
    }, { id: conf.id });
    const r = await pending;
    responses.push(r);
    expect(r.status).toBe(200);
    expect(configText()).toBe(before);
  });
});

describe('file:// pages', () => {
  const note = () => `file://${join(fileDir, 'note.html')}`;
  const authFile = () => join(h.configDir, 'extension', 'auth.json');

  test('refused by default, with the way to allow them in the message', async () => {
    const r = await call('browser_open_tab', { url: note() });
    expectRefused(r, 'open a file page');
    expect(r.body.error.message).toContain('allowFileUrls');
  });

  test('allowed once the user turns it on in the side panel, except the config folder', async () => {
    const panel = await h.openSidePanel();
    const box = panel.locator('[data-testid="allow-file-urls"]');
    await box.waitFor({ timeout: 15_000 });
    expect(await box.isChecked()).toBe(false);
    await box.check();
    await waitUntil(() => JSON.parse(configText()).allowFileUrls === true, 'allowFileUrls saved in config.json');
    const opened = await waitUntil(async () => {
      const r = await call('browser_open_tab', { url: note() });
      return r.status === 200 ? r : null;
    }, 'the file page to open');
    const tabId = opened.body.result.id as number;
    const content = await call('browser_get_tab_content', { tabId });
    expect(content.status).toBe(200);
    expect(content.body.result.content).toContain('a local note');

    const dir = h.configDir;
    const tricks = [
      `file://${authFile()}`,
      `file://localhost${authFile()}`,
      `file://${dir}/extension/%61uth.json`,
      `file://${dir}/extension/../extension/auth.json`,
      `file://${dir}/plugins/../extension/auth.json`,
      `file://${dir}%2Fextension%2Fauth.json`,
      `file://${dir}/extension/`,
      `file://${dir}/config.json`,
      `file://${dir}`,
    ];
    for (const url of tricks) {
      expectRefused(await call('browser_open_tab', { url }), `open ${url}`);
      expectRefused(await call('browser_navigate_tab', { tabId, url }), `navigate to ${url}`);
    }
    // A tab the user opened on auth.json stays unreadable.
    const page = await h.context.newPage();
    await page.goto(`file://${authFile()}`);
    const authTabId = await chromeTabId(page);
    for (const tool of ['browser_get_tab_content', 'browser_screenshot_tab', 'browser_execute_script']) {
      expectRefused(await call(tool, tool === 'browser_execute_script' ? { tabId: authTabId, code: 'document.body.innerText' } : { tabId: authTabId }), `${tool} on auth.json`);
    }
    await page.close();
    await call('browser_close_tab', { tabId });
  });

  test('`opentabs config set allowFileUrls false` turns it off again', async () => {
    const r = await runCli(['config', 'set', 'allowFileUrls', 'false', '--port', String(h.srv.port)], { configDir: h.configDir });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(configText()).allowFileUrls).toBe(false);
    await waitUntil(async () => (await call('browser_open_tab', { url: note() })).status === 403, 'file pages refused again');
  });

});

describe('the secret', () => {
  test('appears in no tool response of this file, nor in extension state and logs', async () => {
    responses.push(await call('extension_get_state'), await call('extension_get_logs', { limit: 1000 }), await call('browser_list_tabs'), await call('browser_list_windows'));
    expect(responses.length).toBeGreaterThan(100);
    const secret = h.srv.secret;
    expect(secret.length).toBeGreaterThan(20);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(secret);
  });
});
