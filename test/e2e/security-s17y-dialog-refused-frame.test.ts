/**
 * A JavaScript dialog's text reached the agent whatever frame opened it: with file:// allowed, a
 * file:// page (one the agent saved with browser_download, say) framing a hidden HTML file got the
 * text and default answer of that file's prompt() in the navigation's result, in every later
 * call's "a dialog blocks the page" error and in browser_handle_dialog's answer, though every
 * reading tool refuses the file. A dialog of a frame showing a page the tools may not use is now
 * reported without its text; it can still be answered. The page's own dialogs keep theirs.
 * Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, waitUntil, type BrowserHarness, allowFileUrls } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let home = '';
const HIDDEN = ['HIDDEN-PROMPT-1', 'HIDDEN-DEFAULT-2', 'HIDDEN-SRCDOC-3', '.ssh'];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'opentabs-s17y-dialog-'));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh', 'notes.html'), '<script>prompt("hidden text HIDDEN-PROMPT-1", "HIDDEN-DEFAULT-2")</script>');
  // A frame with no address of its own, written by the hidden file.
  writeFileSync(join(home, '.ssh', 'writes.html'), '<iframe srcdoc="<script>alert(&quot;HIDDEN-SRCDOC-3&quot;)</script>"></iframe>');
  const page = (src: string) => `<!doctype html><title>report</title><button id="own" onclick="alert('own text OWN-ALERT-4')">own</button><iframe src="file://${home}/.ssh/${src}"></iframe>`;
  writeFileSync(join(home, 'report.html'), page('notes.html'));
  writeFileSync(join(home, 'report2.html'), page('writes.html'));
  writeFileSync(join(home, 'plain.html'), '<!doctype html><p>note</p>');
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  // The user turned file:// pages on.
  await allowFileUrls(h, `file://${home}/plain.html`);
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Opens plain.html, then has the agent navigate it to `target`, whose hidden frame opens a dialog during the load. */
async function navigateIntoDialog(target: string): Promise<{ tabId: number; texts: string[]; dialog: Record<string, unknown> }> {
  const page = await h.context.newPage();
  // Playwright would answer dialogs itself otherwise: the agent is to.
  page.on('dialog', () => {});
  await page.goto(`file://${home}/plain.html`);
  const tabId = await h.tabIdOf(page);
  const texts: string[] = [];
  const nav = await h.callTool('browser_navigate_tab', { tabId, url: `file://${home}/${target}` });
  expect(nav.status).toBe(200);
  texts.push(JSON.stringify(nav.body));
  return { tabId, texts, dialog: nav.body.result.dialog };
}

describe('dialogs of frames the tools may not use', () => {
  test('come without their text and can still be answered; the page\'s own keep theirs', async () => {
    const { tabId, texts, dialog } = await navigateIntoDialog('report.html');
    expect(dialog).toEqual({ type: 'prompt', refusedFrame: true });
    // Every later call says a dialog blocks the page, without its text.
    const blocked = await h.callTool('browser_get_tab_content', { tabId });
    expect(blocked.status).not.toBe(200);
    texts.push(JSON.stringify(blocked.body));
    expect(JSON.stringify(blocked.body)).toContain('prompt dialog');
    const answered = await h.callTool('browser_handle_dialog', { tabId, action: 'accept', promptText: 'x' });
    expect(answered.status).toBe(200);
    expect(answered.body.result).toMatchObject({ handled: true, action: 'accept', dialog: { type: 'prompt', refusedFrame: true } });
    texts.push(JSON.stringify(answered.body));
    for (const t of texts) for (const hidden of HIDDEN) expect(t).not.toContain(hidden);

    // The page's own dialog is shown as it is.
    const own = await waitUntil(async () => {
      const r = await h.callTool('browser_click_element', { tabId, selector: '#own' });
      return r.status === 200 ? r : null;
    }, 'the click on the page\'s own button');
    expect(own.body.result.dialog).toEqual({ type: 'alert', message: 'own text OWN-ALERT-4' });
    expect((await h.callTool('browser_handle_dialog', { tabId })).status).toBe(200);
  });

  test('a frame with no address of its own inside a refused one: no text either', async () => {
    const { tabId, texts, dialog } = await navigateIntoDialog('report2.html');
    expect(dialog).toEqual({ type: 'alert', refusedFrame: true });
    const answered = await h.callTool('browser_handle_dialog', { tabId, action: 'dismiss' });
    expect(answered.status).toBe(200);
    texts.push(JSON.stringify(answered.body));
    for (const t of texts) for (const hidden of HIDDEN) expect(t).not.toContain(hidden);
  });
});
