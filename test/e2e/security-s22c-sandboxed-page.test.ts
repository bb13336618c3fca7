/**
 * A page a site serves sandboxed (`Content-Security-Policy: sandbox allow-scripts`, the way sites
 * serve their users' uploads on their own host) runs in an opaque origin ("null"), not the site's:
 * it reads none of the site's cookies or storage. The extension went by the URL: its page tools
 * were listed as the site's (`page:<site origin>`) and ran on the permission the user gave the site
 * (Always allow <site>), and a plugin whose patterns match the URL took it for the app: the
 * plugin's calls, with their arguments and the plugin's settings, went to the uploaded page. Now
 * neither channel takes a document whose origin is not its URL's. Real Chromium, real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

setDefaultTimeout(120_000);

const SHIM = readFileSync(join(import.meta.dir, '../fixtures/pages/page-tools-shim.html'), 'utf8');
const SECRET = 'SETTING-SECRET-s22c';
/** An uploaded page on the plugin app's host: it listens on the plugin channel for what reaches it. */
const UPLOAD = `<!doctype html><title>upload</title><script>
  window.__seen = [];
  document.addEventListener('opentabs:bridge-to-page', (e) => window.__seen.push(String(e.detail)));
</script><body data-user="uploader"><p>a user's upload</p></body>`;
const html = (body: string, sandboxed: boolean) =>
  new Response(body, { headers: { 'content-type': 'text/html; charset=utf-8', ...(sandboxed ? { 'content-security-policy': 'sandbox allow-scripts' } : {}) } });

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s22c-'));
  h = await startBrowserHarness({
    localPlugins: [writeFixturePlugin(pluginParent)],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'auto' } },
    pluginSettings: { fixture: { greeting: SECRET } },
    routes: (req) => {
      const p = new URL(req.url).pathname;
      if (p === '/uploads/tools-sandboxed.html') return html(SHIM, true);
      if (p === '/uploads/tools-plain.html') return html(SHIM, false);
      if (p === '/pages/plugin-app-upload.html') return html(UPLOAD, true);
      return undefined;
    },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

describe('a sandboxed page of a site is not the site', () => {
  test("its page tools are not listed as the site's, nor run on the site's Always allow", async () => {
    // The user gave the site's page tools `auto` (Always allow <site>).
    await h.srv.ctx.config.setOriginPermission(h.fixtureBase, 'auto');
    const plain = await h.context.newPage();
    await plain.goto(h.fixtureUrl('/uploads/tools-plain.html'));
    const plainTab = await h.tabIdOf(plain);
    const sandboxed = await h.context.newPage();
    await sandboxed.goto(h.fixtureUrl('/uploads/tools-sandboxed.html'));
    expect(await sandboxed.evaluate(() => self.origin)).toBe('null');
    const sandboxedTab = await h.tabIdOf(sandboxed);
    // The plain page's tools are listed (and its Port went through the worker after the sandboxed one's).
    await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${plainTab}_createTodo`), "the site's own page tool listed");
    await sandboxed.reload();
    await plain.reload();
    await waitUntil(() => h.srv.ctx.catalog.current().get(`tab${plainTab}_createTodo`), "the site's own page tool listed again");
    expect(h.srv.ctx.catalog.current().get(`tab${sandboxedTab}_createTodo`)).toBeUndefined();
    const r = await h.callTool(`tab${sandboxedTab}_createTodo`, { title: 'from the agent' });
    expect(r.status, JSON.stringify(r.body)).not.toBe(200);
    expect(await sandboxed.evaluate(() => (window as unknown as { __todos: string[] }).__todos)).toEqual([]);
    await plain.close();
    await sandboxed.close();
  });

  test("a plugin's call and settings do not reach a sandboxed page its patterns match", async () => {
    const page = await h.context.newPage();
    await page.goto(h.fixtureUrl('/pages/plugin-app-upload.html'));
    expect(await page.evaluate(() => self.origin)).toBe('null');
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('fixture_echo', { text: 'for the app' }, { tabId });
    expect(r.status, JSON.stringify(r.body)).not.toBe(200);
    expect(r.body.error?.code, JSON.stringify(r.body)).toBe('tab_mismatch');
    expect(r.body.error?.message).toContain('sandboxed');
    const seen = await page.evaluate(() => (window as unknown as { __seen: string[] }).__seen);
    expect(seen.join('\n')).not.toContain(SECRET);
    expect(seen.join('\n')).not.toContain('for the app');
    await page.close();
  });
});
