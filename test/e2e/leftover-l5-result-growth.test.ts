/**
 * A plugin's page answers a call itself with a result whose JSON text is within the size cap as
 * written but not once parsed and serialised again: `1e20` (4 characters) is written
 * `100000000000000000000` (21), so the message the tab bridge posts grew to about 4.4 times its
 * text, and the worker received that much before refusing it. The bridge now bounds what the text
 * becomes and measures the rest itself: the call is refused for its size, and nothing larger than
 * the cap (plus the message around it) crosses the Port. Counted where the worker receives, by a
 * listener on the worker's tab Ports. Real Chromium, real extension, the fixture plugin.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import { BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, TAB_PORT_NAME } from '../../server/protocol/page-channel.ts';
import { writeFixturePlugin } from '../fixtures/ext-plugin/plugin.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';
import type { Page } from 'playwright-core';

setDefaultTimeout(180_000);
let h: BrowserHarness;
let parent = '';
let app: Page;
/** What the message around a result's value adds (type, id, plugin, ok). */
const ENVELOPE = 1024;

beforeAll(async () => {
  parent = mkdtempSync(join(tmpdir(), 'opentabs-result-growth-'));
  h = await startBrowserHarness({ localPlugins: [writeFixturePlugin(parent)], permissions: { fixture: { default: 'auto' } } });
  await (await h.serviceWorker()).evaluate((portName) => {
    const g = globalThis as unknown as { __largestResult: number; __results: number };
    g.__largestResult = 0;
    g.__results = 0;
    chrome.runtime.onConnect.addListener((p) => {
      if (p.name !== portName) return;
      p.onMessage.addListener((m: { type?: string }) => {
        if (m?.type !== 'result') return;
        g.__results++;
        g.__largestResult = Math.max(g.__largestResult, new TextEncoder().encode(JSON.stringify(m)).length);
      });
    });
  }, TAB_PORT_NAME);
  app = await h.context.newPage();
  await app.goto(h.fixtureUrl('/pages/plugin-app.html'));
  await h.waitForHealth((x) => x.pluginDetails?.find((p: any) => p.name === 'fixture')?.tabState === 'ready', 'fixture tab state ready');
}, 60_000);

afterAll(async () => {
  await h?.stop();
  if (parent) rmSync(parent, { recursive: true, force: true });
});

/** The page answers the next call of fixture_wait itself, first, with `valueText` as the value's JSON text. */
async function answerNextWait(valueText: string): Promise<void> {
  await app.evaluate(
    ([fromBridge, toBridge, value]) => {
      const on = (ev: Event) => {
        const m = JSON.parse((ev as CustomEvent).detail) as { type: string; id: string; plugin: string; tool: string };
        if (m.type !== 'call' || m.tool !== 'wait') return;
        document.removeEventListener(fromBridge!, on);
        document.dispatchEvent(new CustomEvent(toBridge!, { detail: `{"type":"result","id":${JSON.stringify(m.id)},"plugin":"fixture","ok":true,"value":${value}}` }));
      };
      document.addEventListener(fromBridge!, on);
    },
    [BRIDGE_TO_PAGE_EVENT, PAGE_TO_BRIDGE_EVENT, valueText],
  );
}

const seen = async () => (await h.serviceWorker()).evaluate(() => {
  const g = globalThis as unknown as { __largestResult: number; __results: number };
  return { largest: g.__largestResult, results: g.__results };
});

test('a result within the cap as written, about 4.4 times it once serialised again, is refused in the page; the worker never gets more than the cap', async () => {
  // 1.9 MB of text that becomes 8.4 MB (over the 8 MB cap) once serialised again.
  const n = Math.ceil(PLUGIN_RESULT_MAX_BYTES / 22) + 1000;
  const text = `[${Array(n).fill('1e20').join(',')}]`;
  expect(text.length).toBeLessThan(PLUGIN_RESULT_MAX_BYTES / 4);
  await answerNextWait(text);
  const before = await seen();
  const r = await h.callTool('fixture_wait', { ms: 60_000 });
  expect(r.status).not.toBe(200);
  expect(r.body.error.code).toBe('result_too_large');
  expect(r.body.error.message).toContain(`is ${22 * n - 1 + 2} bytes of JSON, over the ${PLUGIN_RESULT_MAX_BYTES}-byte limit`);
  const after = await seen();
  expect(after.results).toBe(before.results + 1);
  expect(after.largest).toBeLessThanOrEqual(PLUGIN_RESULT_MAX_BYTES + ENVELOPE);
});

test('a result with such numbers that stays within the cap once serialised again still arrives whole', async () => {
  const n = 20_000;
  await answerNextWait(`{"big":[${Array(n).fill('1e20').join(',')}],"t":"${'x'.repeat(1_000_000)}"}`);
  const r = await h.callTool('fixture_wait', { ms: 60_000 });
  expect(r.status).toBe(200);
  expect(r.body.result.big.length).toBe(n);
  expect(r.body.result.big[0]).toBe(1e20);
  expect(r.body.result.t.length).toBe(1_000_000);
  expect((await seen()).largest).toBeLessThanOrEqual(PLUGIN_RESULT_MAX_BYTES + ENVELOPE);
});
