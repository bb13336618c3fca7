/**
 * Two side panel lines that showed what plugins and agents wrote as it came. Real side panel of
 * the real extension.
 *
 * The error line at the top: the server's refusal of a settings change quotes the plugin's own
 * choices for a select setting ("must be one of …"), and a plugin's text there held a U+202E
 * (turning the text after it around) or zero-width characters as they were. It now shows hidden
 * and direction-changing characters as \uXXXX, as the rest of the panel does. The select's
 * choices themselves too.
 *
 * The activity list's arguments summary: it masked values under keys like "password" or "token"
 * and long random strings, but showed a PIN, a one-time code, a card number or a social security
 * number. It masks by the rule plugin drafts redact by (server/protocol/secret-values.ts).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let parent = '';
let panel: Page;
const CHOICE = 'slow \u202eknaB enilnO\u200b\u2066\u001b[2J';

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-s20k-panel-'));
  const dir = writeFixturePlugin(parent);
  const manifestPath = join(dir, 'dist', 'tools.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.configSchema.mode = { type: 'select', label: 'Mode', options: ['fast', CHOICE] };
  manifest.tools[0].inputSchema = { type: 'object', additionalProperties: true };
  writeFileSync(manifestPath, JSON.stringify(manifest));
  h = await startBrowserHarness({ localPlugins: [dir], permissions: { fixture: { default: 'auto' } } });
  const app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab ready');
  panel = await h.openSidePanel();
  await panel.waitForSelector('[data-testid="connection"][data-state="connected"]', { timeout: 15_000 });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

describe('the error line', () => {
  test("a refused settings change quoting the plugin's choices shows hidden characters as escapes", async () => {
    const form = panel.locator('form[data-settings="fixture"]');
    await form.waitFor({ timeout: 15_000 });
    const shown = await form.locator('select[name="mode"] option').allTextContents();
    expect(shown).toEqual(['fast', 'slow \\u202eknaB enilnO\\u200b\\u2066\\u001b[2J']);
    // A value the plugin no longer offers (its form drawn before the plugin changed its choices).
    await form.locator('select[name="mode"]').evaluate((sel: HTMLSelectElement) => {
      const o = document.createElement('option');
      o.value = 'medium';
      o.textContent = 'medium';
      sel.append(o);
      sel.value = 'medium';
    });
    await form.locator('button[type="submit"]').click();
    const line = await waitUntil(() => panel.evaluate(() => document.getElementById('last-error')?.textContent ?? null), 'the error line');
    expect(line).toContain('config.setPluginSettings');
    expect(line).toContain('must be one of');
    for (const c of ['\u202e', '\u200b', '\u2066', '\u001b']) expect(line).not.toContain(c);
    expect(line).toContain('slow \\u202eknaB enilnO\\u200b\\u2066');
  });
});

describe('the activity list', () => {
  test('masks a PIN, a one-time code, card numbers and a social security number as drafts do', async () => {
    const args = {
      text: 'hello',
      shipping: 'Main St 1',
      pin: '4821',
      otp_code: '907313',
      cardNumber: '5500 0000 0000 0004',
      note: '4111-1111-1111-1111',
      contact: '078-05-1120',
      order: '4111111111111112',
    };
    expect((await h.callTool('fixture_echo', args)).status).toBe(200);
    const done = panel.locator('[data-testid="activity-done"][data-status="ok"]').first();
    await done.waitFor({ timeout: 15_000 });
    await done.locator('summary').click();
    const summary = JSON.parse((await done.locator('[data-testid="activity-args"]').textContent()) ?? '');
    expect(summary).toEqual({
      text: 'hello',
      shipping: 'Main St 1',
      pin: '•••',
      otp_code: '•••',
      cardNumber: '•••',
      note: '•••',
      contact: '•••',
      // Not a card number: its check digit is wrong.
      order: '4111111111111112',
    });
  });
});
