/**
 * With file:// pages allowed, hidden files and folders stay refused: MCP client configs that hold
 * the OpenTabs secret (~/.claude.json, ~/.config/opencode/opencode.json, .cursor/mcp.json) and
 * other credentials (~/.ssh, ~/.aws) live there. And whatever page a tool reads, its result never
 * carries the extension's own secret: a page (or a script's result, or its error) showing it gets
 * "[redacted: opentabs secret]" instead. Performed as an agent would: REST tool calls only; the
 * tab a user might have opened on such a file is opened with Playwright.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectPageRefused, startBrowserHarness, waitUntil, type BrowserHarness, type ToolCallResult } from '../harness/browser.ts';

setDefaultTimeout(120_000);

const REDACTED = '[redacted: opentabs secret]';
let h: BrowserHarness;
let home = '';
const responses: ToolCallResult[] = [];

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolCallResult> {
  const r = await h.callTool(name, args);
  responses.push(r);
  return r;
}

/** A home folder with the files an MCP client setup leaves, each holding the secret. */
function hiddenFiles(): string[] {
  const files = [join(home, '.claude.json'), join(home, '.config', 'opencode', 'opencode.json'), join(home, 'project', '.cursor', 'mcp.json'), join(home, '.ssh', 'notes.html')];
  for (const f of files) {
    mkdirSync(join(f, '..'), { recursive: true });
    writeFileSync(f, f.endsWith('.html') ? `<title>key</title><p>${h.srv.secret}</p>` : JSON.stringify({ mcpServers: { opentabs: { headers: { Authorization: `Bearer ${h.srv.secret}` } } } }));
  }
  return files.map((f) => `file://${f}`);
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-hidden-'));
  h = await startBrowserHarness({
    permissions: { browser: { default: 'auto', tools: { browser_execute_script: 'auto' } } },
    // A site that shows the secret (pasted into a form, a support ticket, a config viewer …).
    routes: (req) => {
      if (new URL(req.url).pathname !== '/shows-secret') return undefined;
      return new Response(`<!doctype html><title>config</title><pre id="cfg">token: ${h.srv.secret}</pre>`, { headers: { 'content-type': 'text/html; charset=utf-8' } });
    },
  });
  writeFileSync(join(home, 'note.html'), '<!doctype html><title>note</title><p>a local note</p>');
  writeFileSync(join(home, 'pasted.html'), `<!doctype html><title>pasted</title><p>the key is ${h.srv.secret}.</p>`);
  // The user turned file:// pages on (side panel or `opentabs config set allowFileUrls true`).
  await h.srv.ctx.config.update((d) => {
    d.allowFileUrls = true;
  });
  h.srv.ctx.hub.sendSyncFull();
  await waitUntil(async () => {
    const r = await h.callTool('browser_open_tab', { url: `file://${join(home, 'note.html')}` });
    if (r.status !== 200) return null;
    await h.callTool('browser_close_tab', { tabId: r.body.result.id });
    return true;
  }, 'file:// pages allowed');
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const expectHiddenRefused = (r: ToolCallResult, what: string): void => expectPageRefused(r, what, /hidden file or inside a hidden folder/);

describe('hidden files and folders with file:// allowed', () => {
  test('cannot be opened, navigated to or downloaded, whatever the spelling', async () => {
    const note = await call('browser_open_tab', { url: `file://${join(home, 'note.html')}` });
    expect(note.status).toBe(200);
    const tabId = note.body.result.id as number;
    const urls = [...hiddenFiles(), `file://${home}/x/../.ssh/notes.html`, `file://${home}/%2Essh/notes.html`, `file://${home}/.config/`];
    for (const url of urls) {
      for (const r of [await call('browser_open_tab', { url }), await call('browser_create_window', { url }), await call('browser_navigate_tab', { tabId, url }), await call('browser_download', { url })]) {
        expectHiddenRefused(r, url);
      }
    }
    // The ordinary file page is still readable, and stayed where it was.
    const content = await call('browser_get_tab_content', { tabId });
    expect(content.status).toBe(200);
    expect(content.body.result.content).toContain('a local note');
    expect((await call('browser_list_downloads', {})).body.result.downloads).toEqual([]);
    await call('browser_close_tab', { tabId });
  });

  test('a tab the user opened on a hidden file cannot be read', async () => {
    const url = hiddenFiles()[3]!;
    const page = await h.context.newPage();
    try {
      await page.goto(url);
      const tabId = await waitUntil(async () => {
        const r = await call('browser_list_tabs');
        return (r.body.result.tabs as { id: number; url: string; restricted?: string }[]).find((t) => t.restricted && t.url === 'file:')?.id;
      }, 'the hidden file tab listed as restricted');
      for (const [tool, args] of [
        ['browser_get_tab_content', {}],
        ['browser_get_page_html', {}],
        ['browser_screenshot_tab', {}],
        ['browser_execute_script', { code: 'document.body.innerText' }],
      ] as const) {
        expectHiddenRefused(await call(tool, { tabId, ...args }), `${tool} on ${url}`);
      }
    } finally {
      await page.close();
    }
  });
});

describe('no result carries the secret', () => {
  test('a page showing it: read, as HTML, by a script, in a script error', async () => {
    for (const url of [h.fixtureUrl('/shows-secret'), `file://${join(home, 'pasted.html')}`]) {
      const opened = await call('browser_open_tab', { url });
      expect(opened.status).toBe(200);
      const tabId = opened.body.result.id as number;
      const content = await call('browser_get_tab_content', { tabId });
      expect(content.status).toBe(200);
      expect(JSON.stringify(content.body)).toContain(REDACTED);
      const html = await call('browser_get_page_html', { tabId });
      expect(JSON.stringify(html.body)).toContain(REDACTED);
      const script = await call('browser_execute_script', { tabId, code: 'document.body.innerText' });
      expect(script.status).toBe(200);
      expect(script.body.result.value).toContain(REDACTED);
      const thrown = await call('browser_execute_script', { tabId, code: 'throw new Error("found " + document.body.innerText)' });
      expect(thrown.status).not.toBe(200);
      expect(thrown.body.error.message).toContain(REDACTED);
      await call('browser_close_tab', { tabId });
    }
  });

  test('the secret appears in no response of this file', () => {
    expect(responses.length).toBeGreaterThan(20);
    for (const r of responses) expect(JSON.stringify(r.body)).not.toContain(h.srv.secret);
  });
});
