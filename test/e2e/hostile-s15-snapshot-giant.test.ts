/**
 * browser_snapshot on giant or hostile pages, in real Chromium with the real extension: 200,000
 * nodes, 50 MB of text, 2,000 nested shadow roots and elements nested 2,000 deep. Each call
 * answers with the snapshot cut and a mark saying what was left out and how to read the rest,
 * within SNAPSHOT_MAX_CHARS, and a snapshot of another tab still works after. Elements nested
 * 10,000 deep crash Chromium's renderer by itself (from about 3,000, without the extension too):
 * the call then says the tab's page is not loaded and to reload it, and other tabs still answer.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import type { Page } from 'playwright-core';
import { SNAPSHOT_MAX_CHARS, SNAPSHOT_NESTING_MAX } from '../../extension/page/snapshot.ts';
import { startBrowserHarness, type BrowserHarness } from '../harness/browser.ts';

setDefaultTimeout(120_000);
let h: BrowserHarness;
let goodTab: number;

beforeAll(async () => {
  h = await startBrowserHarness({ permissions: { browser: { default: 'auto' } } });
  const good = await h.context.newPage();
  await good.goto(h.fixtureUrl('/pages/index.html?good'));
  goodTab = await h.tabIdOf(good);
}, 60_000);

afterAll(async () => {
  await h?.stop();
});

async function hostile(name: string, build: () => void): Promise<{ page: Page; tabId: number }> {
  const page = await h.context.newPage();
  await page.goto(h.fixtureUrl(`/pages/index.html?hostile-${name}`));
  await page.evaluate(build);
  return { page, tabId: await h.tabIdOf(page) };
}

async function snapshot(tabId: number): Promise<string> {
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.status).toBe(200);
  return r.body.result.snapshot as string;
}

async function otherTabWorks() {
  const s = await snapshot(goodTab);
  expect(s.length).toBeGreaterThan(0);
  expect(s).not.toContain('snapshot cut');
}

test('200,000 nodes: the snapshot is cut at its bound, with a mark', async () => {
  const { page, tabId } = await hostile('nodes', () => {
    const body = document.body;
    body.textContent = '';
    for (let i = 0; i < 2_000; i++) {
      const div = document.createElement('div');
      for (let j = 0; j < 50; j++) {
        const p = document.createElement('p');
        p.textContent = `Row ${i}.${j} with some words`;
        div.appendChild(p);
      }
      body.appendChild(div);
    }
  });
  const s = await snapshot(tabId);
  expect(s.length).toBeLessThanOrEqual(SNAPSHOT_MAX_CHARS + 1_000);
  expect(s).toContain('Row 0.0 with some words');
  expect(s).toMatch(/\[snapshot cut at \d+ characters: the rest of the page is not shown; .*selector/);
  await page.close();
  await otherTabWorks();
});

test('50 MB of text: the snapshot answers, cut, with a mark', async () => {
  const { page, tabId } = await hostile('text', () => {
    document.body.textContent = '';
    // 10 MB in one text node, 40 MB in 400,000 paragraphs of 100 characters.
    const one = document.createElement('p');
    one.textContent = 'lorem ipsum dolor sit amet '.repeat(400_000);
    document.body.appendChild(one);
    const line = 'consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua ut e';
    const all = document.createDocumentFragment();
    for (let i = 0; i < 400_000; i++) {
      const p = document.createElement('p');
      p.textContent = line;
      all.appendChild(p);
    }
    document.body.appendChild(all);
    // Chromium's own style pass over 400,000 elements (seconds) is done here, not in the call.
    void document.body.offsetHeight;
  });
  const s = await snapshot(tabId);
  expect(s.length).toBeLessThanOrEqual(SNAPSHOT_MAX_CHARS + 1_000);
  expect(s).toContain('more characters: browser_get_tab_content with a selector reads it all');
  expect(s).toMatch(/\[snapshot cut at \d+ characters: the rest of the page is not shown; .*selector/);
  await page.close();
  await otherTabWorks();
});

test('2,000 nested shadow roots: a snapshot cut at a depth, with a mark', async () => {
  const { page, tabId } = await hostile('shadow', () => {
    document.body.textContent = '';
    let host: Element = document.body;
    for (let i = 0; i < 2_000; i++) {
      const div = document.createElement('div');
      const root = host === document.body ? host : (host as HTMLElement).attachShadow({ mode: 'open' });
      if (i < 3) root.append(`Level ${i} `);
      root.appendChild(div);
      host = div;
    }
    host.append('Deepest text');
  });
  const s = await snapshot(tabId);
  expect(s).toContain('Level 0');
  expect(s).toContain(`[elements nested more than ${SNAPSHOT_NESTING_MAX} deep are not shown: snapshot a deeper part with a selector]`);
  expect(s).not.toContain('Deepest text');
  await page.close();
  await otherTabWorks();
});

test('2,000-deep nested elements: a snapshot cut at a depth, and the tab still answers', async () => {
  // 2,000 is about as deep as Chromium lays out: from about 3,000 its renderer crashes on its own.
  const { page, tabId } = await hostile('deep', () => {
    document.body.textContent = '';
    let el: Element = document.body;
    for (let i = 0; i < 2_000; i++) {
      const child = document.createElement('div');
      if (i < 3) child.append(`Depth ${i} `);
      el.appendChild(child);
      el = child;
    }
    el.append('Bottom text');
  });
  const s = await snapshot(tabId);
  expect(s).toContain('Depth 0');
  expect(s).toContain(`[elements nested more than ${SNAPSHOT_NESTING_MAX} deep are not shown: snapshot a deeper part with a selector]`);
  expect(s).not.toContain('Bottom text');
  const again = await h.callTool('browser_get_tab_content', { tabId, maxLength: 100 });
  expect(again.status).toBe(200);
  await page.close();
  await otherTabWorks();
});

test('10,000-deep nested elements crash Chromium\'s renderer by itself: the snapshot says so plainly', async () => {
  const { page, tabId } = await hostile('crash', () => {
    document.body.textContent = '';
    let el: Element = document.body;
    for (let i = 0; i < 10_000; i++) {
      const child = document.createElement('div');
      el.appendChild(child);
      el = child;
    }
  });
  const r = await h.callTool('browser_snapshot', { tabId });
  expect(r.status).not.toBe(200);
  expect(r.body.error.code).toBe('not_available');
  expect(r.body.error.message).toContain('is not loaded (its renderer stopped');
  expect(r.body.error.message).toContain('browser_reload_tab');
  await page.close();
  await otherTabWorks();
});
