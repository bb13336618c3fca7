/**
 * browser_force_pseudo_state in Chromium with the real extension: a forced :hover makes the page's
 * :hover rule apply (getComputedStyle in the page), stays past the debugger's idle detach, and
 * states: [] takes it back.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { DEBUGGER_IDLE_DETACH_MS } from '../../extension/tools/debugger.ts';
import { startBrowserHarness, waitUntil, type BrowserHarness } from '../harness/browser.ts';

let h: BrowserHarness;
let page: Page;
let tabId = 0;
const color = () => page.evaluate(() => getComputedStyle(document.getElementById('pseudo')!).color);
const matches = (sel: string) => page.evaluate((s) => document.getElementById('pseudo')!.matches(s), sel);

beforeAll(async () => {
  h = await startBrowserHarness({});
  page = await h.context.newPage();
  await page.goto(h.fixtureUrl('/pages/input-page.html'));
  tabId = await h.tabIdOf(page);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

test('forced :hover applies the :hover rule until cleared', async () => {
  expect(await color()).toBe('rgb(0, 0, 255)');
  const r = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: ['hover'] });
  expect(r.status).toBe(200);
  expect(r.body.result).toMatchObject({ tag: 'a', id: 'pseudo', states: ['hover'], forcedElements: 1 });
  expect(await waitUntil(async () => ((await color()) === 'rgb(255, 0, 0)' ? 'red' : null), 'the :hover colour')).toBe('red');
  expect(await matches(':hover')).toBe(true);
  // Still forced after the debugger's idle time (the session is held).
  await Bun.sleep(DEBUGGER_IDLE_DETACH_MS + 1_000);
  expect(await color()).toBe('rgb(255, 0, 0)');
  // Several states on the same element.
  const both = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: ['hover', 'focus'] });
  expect(both.body.result.states).toEqual(['hover', 'focus']);
  expect(await page.evaluate(() => getComputedStyle(document.getElementById('pseudo')!).outlineColor)).toBe('rgb(0, 128, 0)');
  const clear = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: [] });
  expect(clear.status).toBe(200);
  expect(clear.body.result).toMatchObject({ states: [], forcedElements: 0 });
  expect(await waitUntil(async () => ((await color()) === 'rgb(0, 0, 255)' ? 'blue' : null), 'the colour back')).toBe('blue');
  expect(await page.evaluate(() => document.querySelector('[data-opentabs-node]'))).toBeNull();
}, 60_000);

test('a missing element and an unknown state are refused', async () => {
  const missing = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#nope', states: ['hover'] });
  expect(missing.status).toBe(404);
  const bad = await h.callTool('browser_force_pseudo_state', { tabId, selector: '#pseudo', states: ['checked'] });
  expect(bad.status).toBe(400);
}, 30_000);
