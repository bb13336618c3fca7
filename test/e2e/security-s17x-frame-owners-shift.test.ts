/**
 * The in-page halves of the refused-frame reach check (extension/tools/frame-owners-page.ts), in
 * real Chromium. Frames the tools may use say which of their window's frames they are by index;
 * the iframe of a frame the tools may not use is found among the elements left over. A page that
 * takes a frame out between the frames' answers and the look at the elements shifts the indexes:
 * the refused frame takes the index another frame said was its own and would pass for it. The
 * look answers nothing then (the caller counts the frame as shown). Done step by step here, since
 * through the extension it is a race; the pins' watch and undo are checked the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { frameOwners, unpinOwners, watchFrames } from '../../extension/tools/frame-owners-page.ts';
import { CHROMIUM } from '../harness/browser.ts';

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** Loads a page with an iframe #a (one the tools may use), #k (shown, the refused one's) and #h (hidden, the page's own), and the in-page functions as globals. */
async function load(): Promise<void> {
  await page.setContent(
    `<iframe id="a" srcdoc="<p>a</p>"></iframe><iframe id="k" srcdoc="<p>k</p>" style="width:300px;height:100px"></iframe><iframe id="h" srcdoc="<p>h</p>" style="display:none"></iframe>`,
  );
  await page.evaluate(
    ([w, f, u]) => {
      const g = globalThis as unknown as Record<string, unknown>;
      g.watchFrames = (0, eval)(`(${w})`);
      g.frameOwners = (0, eval)(`(${f})`);
      g.unpinOwners = (0, eval)(`(${u})`);
    },
    [watchFrames.toString(), frameOwners.toString(), unpinOwners.toString()],
  );
}

type G = { watchFrames: typeof watchFrames; frameOwners: typeof frameOwners; unpinOwners: typeof unpinOwners };

describe('the leftover frame-holding elements', () => {
  test('a frame taken out after the frames said where they are: no answer', async () => {
    await load();
    const r = await page.evaluate(() => {
      const g = globalThis as unknown as G;
      g.watchFrames('t1', 'w');
      // #a says it is frame 0; then the page takes it out, and #k becomes frame 0.
      const claimed = [Array.from({ length: window.length }, (_, i) => window[i]).indexOf((document.getElementById('a') as HTMLIFrameElement).contentWindow!)];
      document.getElementById('a')!.remove();
      return { claimed, owners: g.frameOwners(claimed, { token: 't1', store: 'w' }, null) };
    });
    expect(r.claimed).toEqual([0]);
    expect(r.owners).toBeNull();
  });

  test('nothing moved: #k is left over and paints, #h does not', async () => {
    await load();
    const r = await page.evaluate(() => {
      const g = globalThis as unknown as G;
      g.watchFrames('t2', 'w');
      return g.frameOwners([0], { token: 't2', store: 'w' }, null);
    });
    expect(r).toEqual([
      { paint: true, focus: true, hit: false, inert: false },
      { paint: false, focus: false, hit: false, inert: false },
    ]);
  });

  test('pins: a page changing a pinned style is told; values the page set meanwhile stay', async () => {
    await load();
    const r = await page.evaluate(async () => {
      const g = globalThis as unknown as G;
      document.getElementById('k')!.remove();
      const h = document.getElementById('h')!;
      const before = h.style.cssText;
      g.watchFrames('t3', 'w');
      g.frameOwners([0], { token: 't3', store: 'w' }, { token: 'p3', reach: 'paint', store: 'p' });
      const pinned = h.style.cssText;
      const quiet = g.unpinOwners('p3', 'p');
      const restored = h.style.cssText;
      g.watchFrames('t4', 'w');
      g.frameOwners([0], { token: 't4', store: 'w' }, { token: 'p4', reach: 'paint', store: 'p' });
      h.style.visibility = 'visible';
      await new Promise((resolve) => setTimeout(resolve, 0));
      const moved = g.unpinOwners('p4', 'p');
      return { before, pinned, quiet, restored, moved, after: h.style.visibility, gone: g.unpinOwners('p4', 'p') };
    });
    expect(r.pinned).toContain('visibility: hidden !important');
    expect(r.quiet).toEqual({ disturbed: false });
    expect(r.restored).toBe(r.before);
    expect(r.moved).toEqual({ disturbed: true });
    expect(r.after).toBe('visible');
    expect(r.gone).toBeNull();
  });

  test('pins of calls under way at once: neither takes the other for the page, the last one out gives the style back', async () => {
    await load();
    const r = await page.evaluate(async () => {
      const g = globalThis as unknown as G;
      document.getElementById('k')!.remove();
      const h = document.getElementById('h')!;
      const before = h.style.cssText;
      const pin = (n: number, reach: 'paint' | 'focus') => {
        g.watchFrames(`w${n}`, 'w');
        return g.frameOwners([0], { token: `w${n}`, store: 'w' }, { token: `p${n}`, reach, store: 'q' });
      };
      pin(1, 'paint');
      pin(2, 'focus');
      pin(3, 'paint');
      await new Promise((resolve) => setTimeout(resolve, 0));
      const first = g.unpinOwners('p1', 'q');
      await new Promise((resolve) => setTimeout(resolve, 0));
      const held = h.style.cssText;
      const rest = [g.unpinOwners('p3', 'q'), g.unpinOwners('p2', 'q')];
      return { before, first, held, rest, after: h.style.cssText };
    });
    expect(r.first).toEqual({ disturbed: false });
    expect(r.held).toContain('visibility: hidden !important');
    expect(r.held).toContain('display: none !important');
    expect(r.rest).toEqual([{ disturbed: false }, { disturbed: false }]);
    expect(r.after).toBe(r.before);
  });
});
