/**
 * browser_get_console_logs returned the messages of every frame of the tab, and of every script
 * the page loaded: with file:// allowed, a file:// page (one the agent saved with
 * browser_download, say) framing a hidden HTML file got that file's console output and errors,
 * and one loading a hidden file as a script (<script src="file:///home/u/.aws/credentials">)
 * got Chrome's parse error quoting the file, though every reading tool refuses those files.
 * Messages of a frame or script showing a page the tools may not use are now left out; the
 * page's own stay. Performed as an agent would: REST tool calls only; the page is loaded with
 * Playwright so its frames and scripts ran before the call.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s17x-console-'));
  mkdirSync(join(home, '.aws'));
  mkdirSync(join(home, '.ssh'));
  // Parsed as a script, the first line is an assignment to an undeclared name: the error quotes it.
  writeFileSync(join(home, '.aws', 'credentials'), 'AKIAHIDDENKEYID12345\naws_secret_access_key = wJalrXUtnFEMI\n');
  writeFileSync(join(home, '.ssh', 'notes.html'), '<script>console.log("hidden log HIDDEN-LOG-1"); throw new Error("hidden error HIDDEN-ERR-2")</script>');
  writeFileSync(
    join(home, 'report.html'),
    `<!doctype html><title>report</title><script>console.log("own log OWN-LOG-3")</script><script src="file://${home}/.aws/credentials"></script><iframe src="file://${home}/.ssh/notes.html"></iframe>`,
  );
  writeFileSync(join(home, 'plain.html'), '<!doctype html><p>note</p>');
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user turned file:// pages on.
  await allowFileUrls(h, `file://${home}/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('console messages of pages the tools may not use', () => {
  test('are left out; the page\'s own are kept', async () => {
    const page = await h.context.newPage();
    const seen: string[] = [];
    page.on('console', (m) => seen.push(m.text()));
    page.on('pageerror', (e) => seen.push(e.message));
    await page.goto(`file://${home}/report.html`);
    // Chrome did log them (the hidden frame's log reaches the page's console too).
    await waitUntil(() => seen.some((t) => t.includes('HIDDEN-LOG-1')) || null, 'the hidden frame to log');
    const tabId = await h.tabIdOf(page);
    const r = await h.callTool('browser_get_console_logs', { tabId });
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body);
    expect(text).toContain('OWN-LOG-3');
    for (const hidden of ['HIDDEN-LOG-1', 'HIDDEN-ERR-2', 'AKIAHIDDENKEYID12345', '.aws', '.ssh']) expect(text).not.toContain(hidden);
    await page.close();
  });
});
