/**
 * The side panel's activity list masks a token of random letters with no digit. Its arguments
 * summary masks by server/protocol/secret-values.ts; that rule took a long value for a token only
 * when it held a digit, so an API key drawn from letters alone (here under a key that names no
 * credential: an agent passes it as `value` or in a header map) was shown whole in the panel,
 * where anyone looking at the screen, or a screenshot of it, reads it. Words run together (a long
 * slug, a camelCase name, a long word) stay readable. Real side panel of the real extension.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let parent = '';
let panel: Page;

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-s21c-letters-'));
  const dir = writeFixturePlugin(parent);
  const manifestPath = join(dir, 'dist', 'tools.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
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

test('a letters-only API key is masked in the activity list; long words and names are not', async () => {
  const args = {
    // Random letters, no digit: mixed case, lower case only, upper case only.
    value: 'qTxRvWmKpLzHbNcJdFgYsXeAuQiOwRtZyP',
    headers: { 'X-Client': 'mfhqzkwtrbxnplvcsdgjyefhkqpwxzrtnmbv' },
    fallback: 'ZKQWTRXPLMNBVCDFGHJSYTREWQPLKMNBVCXZ',
    // Words run together.
    word: 'supercalifragilisticexpialidocious',
    handler: 'handleSubmitButtonClickForCheckoutForm',
    slug: 'my-very-long-blog-post-about-strengths-and-weaknesses',
    api: 'XMLHttpRequestEventTargetPrototypeChain',
  };
  expect((await h.callTool('fixture_echo', args)).status).toBe(200);
  const done = panel.locator('[data-testid="activity-done"][data-status="ok"]').first();
  await done.waitFor({ timeout: 15_000 });
  await done.locator('summary').click();
  const text = (await done.locator('[data-testid="activity-args"]').textContent()) ?? '';
  expect(JSON.parse(text)).toEqual({
    value: '•••',
    headers: { 'X-Client': '•••' },
    fallback: '•••',
    word: args.word,
    handler: args.handler,
    slug: args.slug,
    api: args.api,
  });
});
