/**
 * The side panel's permission selects (off / ask / auto, per tool, per group, per page origin).
 * What is above them moves whenever the agent's calls start and end, and a page's popup drawn
 * over the panel (a select's list, a date picker) can go away under the user's pointer: a click
 * aimed elsewhere then opens a permission select's list, and the next click picks from it — or,
 * with the select focused, typed letters do ("au…" picks auto). A change took effect whatever
 * had just happened. Now a change to auto (the tool runs without asking) counts only once the
 * select has stayed in place ARM_MS, as the guarded toggles do; it is taken back otherwise. Other
 * changes always work. Real side panel, real extension.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);

let h: BrowserHarness;
let panel: Page;
const TOOL = 'browser_execute_script';

beforeAll(async () => {
  h = await startBrowserHarness({});
  panel = await h.openSidePanel();
  await panel.waitForSelector(`select[data-testid="perm-${TOOL}"]`, { timeout: 15_000 });
}, 120_000);

afterAll(async () => {
  await h?.stop();
});

const stored = (): unknown => JSON.parse(readFileSync(join(h.configDir, 'config.json'), 'utf8')).permissions?.browser?.tools?.[TOOL];

/** In one task: something above moves the select (or `shift` is false), then the choice is made. */
const choose = (value: string, shift: boolean) =>
  panel.evaluate(
    ({ tool, value, shift }) => {
      if (shift) {
        const above = document.createElement('div');
        above.style.height = '40px';
        document.getElementById('activity')!.prepend(above);
      }
      const sel = document.querySelector<HTMLSelectElement>(`select[data-testid="perm-${tool}"]`)!;
      sel.value = value;
      sel.dispatchEvent(new Event('change', { bubbles: true }));
      const note = sel.nextElementSibling?.classList.contains('arm-note') ? sel.nextElementSibling.textContent : null;
      return { value: sel.value, title: sel.title, note };
    },
    { tool: TOOL, value, shift },
  );

test('a select raised to auto right after it moved is taken back; in place it counts; lowering always works', async () => {
  expect(await panel.locator(`select[data-testid="perm-${TOOL}"]`).inputValue()).toBe('off');
  const refused = await choose('auto', true);
  expect(refused.value).toBe('off');
  expect(refused.title).toContain('moved just now');
  expect(refused.note).toBe('moved just now: choose auto again');

  // In place (a later try), the same choice counts.
  await waitUntil(
    async () => {
      if (stored() === 'auto') return true;
      await choose('auto', false);
      return stored() === 'auto' || null;
    },
    'auto stored once the select stayed in place',
    20_000,
    400,
  );
  await waitUntil(async () => (await panel.locator(`select[data-testid="perm-${TOOL}"]`).inputValue()) === 'auto' || null, 'the panel to show auto');

  // Lowering works at once, moved or not.
  const lowered = await choose('off', true);
  expect(lowered.value).toBe('off');
  await waitUntil(() => stored() === 'off' || null, 'off stored');
});
