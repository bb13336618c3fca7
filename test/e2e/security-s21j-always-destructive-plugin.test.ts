/**
 * "Always allow" on the approval card of a plugin tool its author marks destructive
 * (annotations.destructiveHint: true). A marked built-in's Always allow asks once more; a plugin
 * tool that deletes or sends (mail, payments, records) stored `auto` with one click, a button away
 * from Allow once, and a double click on Always allow did it as well. The server now sends the
 * card a risk for such a tool, and the card asks the same question as for a marked built-in (its
 * button waits before it works). A read-only plugin tool keeps its one-click Always allow.
 * Real Chromium, the real extension, the fixture plugin with annotations added.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let pluginParent = '';

beforeAll(async () => {
  pluginParent = mkdtempSync(join(tmpdir(), 'opentabs-s21j-plugin-'));
  const dir = writeFixturePlugin(pluginParent);
  const toolsJson = join(dir, 'dist', 'tools.json');
  const manifest = JSON.parse(readFileSync(toolsJson, 'utf8'));
  for (const t of manifest.tools) {
    if (t.name === 'echo') t.annotations = { destructiveHint: true };
    if (t.name === 'wait') t.annotations = { readOnlyHint: true };
  }
  writeFileSync(toolsJson, JSON.stringify(manifest));
  h = await startBrowserHarness({
    localPlugins: [dir],
    permissions: { browser: { default: 'auto' }, fixture: { default: 'ask' } },
  });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (pluginParent) rmSync(pluginParent, { recursive: true, force: true });
});

const stored = (tool: string): unknown => {
  const cfg = JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8'));
  return cfg.permissions?.fixture?.tools?.[tool];
};

async function openApp(): Promise<void> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/plugin-app.html?s21j'));
  await waitUntil(() => h.srv.ctx.hub.tabsFor('fixture').tabs.some((t) => t.ready) || null, 'a fixture tab ready');
}

test("a destructive plugin tool's Always allow asks once more, and a double click does not answer it", async () => {
  await openApp();
  const panel = await h.openSidePanel();
  let settled = false;
  const call = h.callTool('fixture_echo', { text: 'delete everything' }).finally(() => (settled = true));
  const card = panel.locator('[data-testid="confirm-fixture_echo"]');
  await card.waitFor({ timeout: 15_000 });
  expect(await card.locator('[data-testid="approval-risk"]').textContent()).toBe('⚠ may change or delete data (its author marks it destructive)');

  const always = card.locator('[data-testid="always-allow"]');
  await waitUntil(async () => (await always.isEnabled()) || null, 'the card to arm');
  // Two clicks at once: the first turns the card into the question, the second lands on its new
  // button, which does not work yet.
  await always.dblclick();
  const confirm = card.locator('[data-testid="always-allow-confirm"]');
  await confirm.waitFor({ timeout: 10_000 });
  expect(await card.locator('[data-testid="always-allow-question"]').textContent()).toBe(
    'Never ask again for fixture_echo? It may change or delete data (its author marks it destructive). Allow once, or Deny, answers this call only.',
  );
  expect(settled).toBe(false);
  expect(h.srv.ctx.hub.confirmations.list().map((c) => c.tool)).toEqual(['fixture_echo']);
  // The panel counts the card's time from the server's remainingMs (not its wall-clock expiresAt).
  expect(h.srv.ctx.hub.confirmations.list()[0]!.remainingMs).toBeGreaterThan(0);
  expect(stored('echo')).toBeUndefined();

  await waitUntil(async () => (await confirm.isEnabled()) || null, 'the question to arm');
  await confirm.click();
  expect((await call).status).toBe(200);
  await waitUntil(() => stored('echo') === 'auto' || null, 'auto stored for fixture echo');
});

test("a read-only plugin tool's Always allow still works in one click", async () => {
  const panel = await h.openSidePanel();
  const call = h.callTool('fixture_wait', { ms: 0 });
  const card = panel.locator('[data-testid="confirm-fixture_wait"]');
  await card.waitFor({ timeout: 15_000 });
  expect(await card.locator('[data-testid="approval-risk"]').count()).toBe(0);
  await card.locator('[data-testid="always-allow"]').click({ timeout: 20_000 });
  expect((await call).status).toBe(200);
  await waitUntil(() => stored('wait') === 'auto' || null, 'auto stored for fixture wait');
});

test("a page tool its page marks destructive asks once more too; the page's other tools keep one click", async () => {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/page-tools-shim.html?s21j'));
  await page.evaluate(() => {
    (navigator as unknown as { modelContext: { registerTool(t: unknown): void } }).modelContext.registerTool({
      name: 'wipeTodos',
      description: 'Delete every todo',
      inputSchema: { type: 'object', properties: {} },
      annotations: { destructiveHint: true },
      execute() {
        return { content: [{ type: 'text', text: 'wiped' }] };
      },
    });
  });
  const tabId = await h.tabIdOf(page);
  const name = `tab${tabId}_wipeTodos`;
  const listed = await waitUntil(() => h.srv.ctx.catalog.current().get(name), 'the page tool listed');
  expect(listed.annotations).toEqual({ destructiveHint: true });
  expect(h.srv.ctx.catalog.current().get(`tab${tabId}_listTodos`)?.annotations).toBeUndefined();
  const origin = new URL(h.fixtureUrl('/')).origin;

  const panel = await h.openSidePanel();
  let settled = false;
  const call = h.callTool(name, {}).finally(() => (settled = true));
  const card = panel.locator(`[data-testid="confirm-${name}"]`);
  await card.waitFor({ timeout: 15_000 });
  const always = card.locator('[data-testid="always-allow"]');
  await waitUntil(async () => (await always.isEnabled()) || null, 'the card to arm');
  await always.dblclick();
  const confirm = card.locator('[data-testid="always-allow-confirm"]');
  await confirm.waitFor({ timeout: 10_000 });
  expect(await card.locator('[data-testid="always-allow-question"]').textContent()).toBe(
    `Never ask again for ${name} and the other tools ${origin} offers now (one it adds or changes later asks again)? It may change or delete data (its author marks it destructive). Allow once, or Deny, answers this call only.`,
  );
  expect(settled).toBe(false);
  expect(h.srv.ctx.hub.confirmations.list().map((c) => c.tool)).toEqual([name]);
  await waitUntil(async () => (await confirm.isEnabled()) || null, 'the question to arm');
  await card.locator('[data-testid="deny"]').click();
  expect((await call).body.error?.code).toBe('permission_denied');

  // Its page's tool without the mark: one click.
  const list = h.callTool(`tab${tabId}_listTodos`, {});
  const plain = panel.locator(`[data-testid="confirm-tab${tabId}_listTodos"]`);
  await plain.waitFor({ timeout: 15_000 });
  expect(await plain.locator('[data-testid="approval-risk"]').count()).toBe(0);
  await plain.locator('[data-testid="allow"]').click({ timeout: 20_000 });
  expect((await list).status).toBe(200);
  await page.close();
});
