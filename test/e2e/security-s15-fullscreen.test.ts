/**
 * A page shown full screen has no address bar and no tab strip: it can draw its own, naming any
 * site (a lookalike login page under a fake bar that says bank.example). A page that asks for full
 * screen needs the user's gesture, and Chrome names its site as it enters; a window the extension
 * makes full screen gets neither. So the window tools take no `fullscreen` state, and no window
 * ends up full screen. Performed as an agent would: REST tool calls only.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const states = async () => (await h.serviceWorker()).evaluate(async () => (await chrome.windows.getAll()).map((w) => w.state));

describe('full screen windows', () => {
  test('browser_create_window and browser_update_window refuse fullscreen; no window goes full screen', async () => {
    const created = await h.callTool('browser_create_window', { url: h.fixtureUrl('/pages/index.html?fs'), state: 'fullscreen' });
    expect([created.status, created.body.error?.code]).toEqual([400, 'invalid_arguments']);
    const made = await h.callTool('browser_create_window', { url: h.fixtureUrl('/pages/index.html?fs') });
    expect(made.status).toBe(200);
    const windowId = made.body.result.id as number;
    const updated = await h.callTool('browser_update_window', { windowId, state: 'fullscreen' });
    expect([updated.status, updated.body.error?.code]).toEqual([400, 'invalid_arguments']);
    expect((await states()).filter((s) => s === 'fullscreen' || s === 'locked-fullscreen')).toEqual([]);
    // Maximized still works.
    expect((await h.callTool('browser_update_window', { windowId, state: 'maximized' })).status).toBe(200);
    await h.callTool('browser_close_window', { windowId });
  });
});
