/**
 * What a plugin package says of itself is drawn in the side panel: its display name (on its card
 * and as the title of its tools' group), its tools' descriptions, its settings' labels. A package
 * from the registry is anyone's: a U+202E there turns the text after it around, so a plugin could
 * read as another one ("Fixture\u202e..." drawn backwards). These show hidden and
 * direction-changing characters as \uXXXX, as the arguments and titles do. Real side panel of the
 * real extension.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let parent = '';
const DISPLAY = 'Fixture \u202eknaB enilnO';
const DESCRIPTION = 'Echo the input \u2066(read only)\u2069\u200b';
const LABEL = 'Greeting\u202e';

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-s19c-plugin-text-'));
  const dir = writeFixturePlugin(parent);
  const manifestPath = join(dir, 'dist', 'tools.json');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  manifest.displayName = DISPLAY;
  manifest.tools[0].description = DESCRIPTION;
  manifest.configSchema.greeting.label = LABEL;
  writeFileSync(manifestPath, JSON.stringify(manifest));
  h = await startBrowserHarness({ localPlugins: [dir], permissions: { fixture: { default: 'ask' } } });
}, 120_000);

afterAll(async () => {
  await h?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

describe("a plugin's own words in the side panel", () => {
  test('display name, tool description and setting label show hidden characters as escapes', async () => {
    const panel = await h.openSidePanel();
    const card = panel.locator('[data-testid="plugin-fixture"]');
    await card.waitFor({ timeout: 15_000 });
    const name = (await card.locator('strong').first().textContent()) ?? '';
    expect(name).not.toContain('\u202e');
    expect(name).toContain('Fixture \\u202eknaB enilnO');
    const label = (await card.locator('form[data-settings="fixture"] label').first().textContent()) ?? '';
    expect(label).not.toContain('\u202e');
    expect(label).toContain('Greeting\\u202e');
    const group = (await panel.locator('[data-testid="tool-group-plugin:fixture"] .group-head strong').textContent()) ?? '';
    expect(group).not.toContain('\u202e');
    expect(group).toContain('\\u202e');
    const description = (await panel.locator('[data-testid="tool-description-fixture_echo"]').textContent()) ?? '';
    for (const c of ['\u2066', '\u2069', '\u200b']) expect(description).not.toContain(c);
    expect(description).toBe('Echo the input \\u2066(read only)\\u2069\\u200b');
  });
});
