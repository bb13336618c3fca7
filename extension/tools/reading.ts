/** The reading group: page text, HTML, element queries, screenshots. Each runs one script in the tab. */
import { ToolError } from '../shared/tool-error.ts';
import { pageFindError } from './acting.ts';
import { withDebugger } from './debugger.ts';
import { captureSpaced } from './capture.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameTarget, type ScriptTarget } from './frames.ts';
import { snapshotPage, withFrames, type PageSnapshot } from './snapshot.ts';
import type { Handlers, ToolCtx } from './types.ts';
import { checkedScriptTarget, tabRefusal, tabRefusedError } from './url-policy.ts';

/** One script in the tab's top document, or in the frame a snapshot ref names (`ref`). */
export async function runInTab<A extends unknown[], R>(tabId: number, func: (...args: A) => R, args: A, ref?: string | null, checked?: ScriptTarget): Promise<Awaited<R>> {
  const frameId = frameOfRef(ref);
  const target = checked ?? (frameId ? await frameTarget(tabId, frameId, ref) : await checkedScriptTarget(tabId));
  try {
    const [res] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: func as never, args: args as never });
    if (res && 'error' in res && res.error) throw new Error(String((res as { error: unknown }).error));
    return res?.result as Awaited<R>;
  } catch (err) {
    const m = (err as Error).message;
    if (/Cannot access|chrome:\/\/|extensions gallery/i.test(m)) {
      throw new ToolError(`This page cannot be read by extensions (${m})`, { code: 'not_available', category: 'validation' });
    }
    throw err;
  }
}

/** In the page: text/HTML of the selector (or the whole page), or a marker when nothing matches. */
function readPage(mode: 'text' | 'html', selector: string | null, maxLength: number) {
  let el: Element | null = document.documentElement;
  if (selector) {
    try {
      el = document.querySelector(selector);
    } catch {
      return { error: `Invalid CSS selector: ${selector}` };
    }
    if (!el) return { error: `No element matches ${selector}` };
  }
  const full = mode === 'text' ? ((el as HTMLElement).innerText ?? el.textContent ?? '') : el.outerHTML;
  return { url: location.href, title: document.title, content: full.slice(0, maxLength), length: full.length, truncated: full.length > maxLength };
}

function queryPage(selector: string, limit: number, attributes: string[] | null) {
  // Injected alone (serialized): its own shadow-piercing query (the page's matches first, then
  // those in open shadow roots), as the selector argument promises.
  const deepAll = (root: Document | ShadowRoot, out: Element[]): Element[] => {
    out.push(...root.querySelectorAll(selector));
    for (const e of root.querySelectorAll('*')) if (e.shadowRoot) deepAll(e.shadowRoot, out);
    return out;
  };
  let nodes: Element[];
  try {
    nodes = deepAll(document, []);
  } catch {
    return { error: `Invalid CSS selector: ${selector}` };
  }
  const elements = nodes.slice(0, limit).map((el, index) => {
    const r = el.getBoundingClientRect();
    const attrs: Record<string, string> = {};
    const names = attributes ?? ['id', 'class', 'href', 'name', 'type', 'value', 'aria-label', 'role', 'placeholder'];
    for (const n of names) {
      const v = el.getAttribute(n);
      if (v !== null) attrs[n] = v;
    }
    return {
      index,
      tag: el.tagName.toLowerCase(),
      text: ((el as HTMLElement).innerText ?? el.textContent ?? '').trim().slice(0, 200),
      attributes: attrs,
      visible: r.width > 0 && r.height > 0,
      rect: { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) },
    };
  });
  return { total: nodes.length, elements };
}

/**
 * In the page: resolve when the element reaches the wanted state, or report a timeout. The wait
 * registers under `waitId` in this isolated world's __opentabs_waits__ so a cancelled call stops
 * it here too (cancelWaitInPage): no observer or timer outlives the call.
 */
export function waitInPage(selector: string | null, text: string | null, state: 'visible' | 'attached' | 'hidden', timeoutMs: number, waitId: string) {
  const find = (): Element | null => {
    if (selector) return document.querySelector(selector);
    const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const parent = n.parentElement;
      if (parent && !['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE'].includes(parent.tagName) && n.textContent?.includes(text!)) return parent;
    }
    return null;
  };
  const isVisible = (el: Element) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && cs.visibility !== 'hidden' && cs.display !== 'none';
  };
  const met = () => {
    const el = find();
    if (state === 'attached') return !!el;
    if (state === 'visible') return !!el && isVisible(el);
    return !el || !isVisible(el);
  };
  if (selector) {
    try {
      document.querySelector(selector);
    } catch {
      return Promise.resolve({ error: `Invalid CSS selector: ${selector}` });
    }
  }
  const t0 = performance.now();
  const g = globalThis as unknown as { __opentabs_waits__?: Map<string, () => void> };
  const waits = (g.__opentabs_waits__ ??= new Map());
  return new Promise<{ found: boolean; state: string; elapsedMs: number } | { error: string }>((resolve) => {
    const done = (ok: boolean | 'cancelled') => {
      obs.disconnect();
      clearInterval(iv);
      clearTimeout(to);
      waits.delete(waitId);
      if (ok === 'cancelled') resolve({ error: 'Cancelled' });
      else resolve(ok ? { found: state !== 'hidden', state, elapsedMs: Math.round(performance.now() - t0) } : { error: `Timed out after ${timeoutMs} ms waiting for ${selector ?? JSON.stringify(text)} to be ${state}` });
    };
    waits.set(waitId, () => done('cancelled'));
    const check = () => {
      if (met()) done(true);
    };
    const obs = new MutationObserver(check);
    obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    // Visibility can change without a mutation (CSS animations, layout): poll too.
    const iv = setInterval(check, 100);
    const to = setTimeout(() => done(false), timeoutMs);
    check();
  });
}

/** In the page: stop the wait registered under `waitId` (if it still runs); how many waits remain. */
function cancelWaitInPage(waitId: string): number {
  const waits = (globalThis as unknown as { __opentabs_waits__?: Map<string, () => void> }).__opentabs_waits__;
  waits?.get(waitId)?.();
  return waits?.size ?? 0;
}

/**
 * waitInPage for a tool call: the wait stops in the page when the call's signal fires (cancel,
 * Stop, server timeout), and progress (elapsed of timeoutMs) is reported every second, which also
 * tells the caller the call is alive.
 */
export async function waitInTab(
  tabId: number,
  target: { selector: string | null; text: string | null; state: 'visible' | 'attached' | 'hidden'; timeoutMs: number },
  ctx: Pick<ToolCtx, 'signal' | 'progress'>,
): Promise<{ found: boolean; state: string; elapsedMs: number }> {
  const waitId = crypto.randomUUID();
  const t0 = Date.now();
  const cancel = () => void runInTab(tabId, cancelWaitInPage, [waitId]).catch(() => {});
  ctx.signal.addEventListener('abort', cancel, { once: true });
  const tick = setInterval(() => ctx.progress({ progress: Date.now() - t0, total: target.timeoutMs, message: 'waiting' }), WAIT_PROGRESS_MS);
  // The wait's own timeout runs in the page: a page whose main thread is blocked (a busy script)
  // never reports it, and the progress ticks above would keep the call alive up to the server's
  // cap of minutes. The worker gives up shortly after timeoutMs instead.
  let giveUp: ReturnType<typeof setTimeout> | undefined;
  const unanswered = new Promise<never>((_, reject) => {
    giveUp = setTimeout(() => {
      cancel();
      reject(new ToolError(`Timed out after ${target.timeoutMs} ms: the page in tab ${tabId} did not answer (its main thread is busy, or a dialog blocks it)`, { code: 'timeout', category: 'timeout', retryable: true }));
    }, target.timeoutMs + WAIT_ANSWER_GRACE_MS);
  });
  try {
    const inPage = runInTab(tabId, waitInPage, [target.selector, target.text, target.state, target.timeoutMs, waitId]);
    inPage.catch(() => {});
    const r = await Promise.race([inPage, unanswered]);
    ctx.signal.throwIfAborted();
    // No result: the document the wait ran in went away (the tab navigated or reloaded).
    if (!r) throw new ToolError(`The page in tab ${tabId} navigated or reloaded during the wait; wait again on the new page`, { code: 'not_available', category: 'validation', retryable: true });
    if ('error' in r) {
      if (r.error.startsWith('Timed out')) throw new ToolError(r.error, { code: 'timeout', category: 'timeout', retryable: true });
      throw new ToolError(r.error, { code: 'invalid_arguments', category: 'validation' });
    }
    return r;
  } finally {
    clearInterval(tick);
    clearTimeout(giveUp);
    ctx.signal.removeEventListener('abort', cancel);
  }
}

const WAIT_PROGRESS_MS = 1_000;
/** How long past its timeoutMs a wait may take to hear back from the page. */
const WAIT_ANSWER_GRACE_MS = 2_000;

/** In the page (ISOLATED world, where snapshot refs live): the element's box in document coordinates. */
function elementBox(selector: string | null, ref: string | null): { error: string } | { x: number; y: number; width: number; height: number } {
  // Injected alone (serialized): its own copy of the query that pierces open shadow roots, as the
  // selector argument promises.
  const deepQuery = (root: Document | ShadowRoot, sel: string): Element | null => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const e of root.querySelectorAll('*')) {
      const inner = e.shadowRoot ? deepQuery(e.shadowRoot, sel) : null;
      if (inner) return inner;
    }
    return null;
  };
  let el: Element | null | undefined;
  if (ref) {
    const refs = (globalThis as unknown as { __opentabs_refs__?: { byRef: Map<string, Element> } }).__opentabs_refs__;
    el = refs?.byRef.get(ref);
    if (!el || !el.isConnected) return { error: `Unknown or stale ref ${ref}; take a new browser_snapshot` };
  } else {
    try {
      el = deepQuery(document, selector!);
    } catch {
      return { error: `Invalid CSS selector: ${selector}` };
    }
    if (!el) return { error: `No element matches ${selector}` };
  }
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return { error: `The element ${ref ?? selector} has no visible box` };
  return { x: Math.max(0, r.left + scrollX), y: Math.max(0, r.top + scrollY), width: Math.ceil(r.width), height: Math.ceil(r.height) };
}

async function assertStillShown(tabId: number, windowId: number): Promise<void> {
  const [active] = await chrome.tabs.query({ active: true, windowId });
  if (!active || active.id !== tabId) throw new ToolError(`Tab ${tabId} stopped being the visible tab of its window during the capture; try again`, { code: 'tool_error', category: 'internal', retryable: true });
  const why = tabRefusal(active);
  if (why) throw tabRefusedError(tabId, why);
}

function unwrap<T extends object>(r: T | { error: string }): T {
  if ('error' in r) throw pageFindError(r.error);
  return r;
}

export const readingTools = {
  async browser_get_tab_content(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const r = await runInTab(tab.id!, readPage, ['text', input.selector ?? null, input.maxLength ?? 50_000]);
    return { value: unwrap(r) };
  },

  async browser_get_page_html(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const r = await runInTab(tab.id!, readPage, ['html', input.selector ?? null, input.maxLength ?? 200_000]);
    return { value: unwrap(r) };
  },

  async browser_query_elements(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const r = await runInTab(tab.id!, queryPage, [String(input.selector), input.limit ?? 100, input.attributes ?? null]);
    return { value: unwrap(r) };
  },

  async browser_wait_for_element(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    if (input.selector === undefined && input.text === undefined) {
      throw new ToolError('Pass either selector or text', { code: 'invalid_arguments', category: 'validation' });
    }
    const timeoutMs = input.timeoutMs ?? 10_000;
    return { value: await waitInTab(tab.id!, { selector: input.selector ?? null, text: input.text ?? null, state: input.state ?? 'visible', timeoutMs }, ctx) };
  },

  async browser_snapshot(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const maxDepth = input.maxDepth ?? 50;
    const interactiveOnly = input.interactiveOnly === true;
    // Marks the lines of iframes, which withFrames fills with their frames' content.
    const mark = `\u0001${crypto.randomUUID()}`;
    const target = await checkedScriptTarget(tab.id!);
    const top = unwrap(await runInTab(tab.id!, snapshotPage, [input.selector ?? null, maxDepth, interactiveOnly, '', mark], null, target)) as PageSnapshot;
    const { frameIndex: _, ...r } = { ...top, ...(await withFrames(tab.id!, top, mark, maxDepth, interactiveOnly, target.documentIds?.[0])) };
    // The model reads the outline as plain text; REST callers get the same fields as JSON.
    return { value: r, text: `Page: ${r.title} (${r.url})\n${r.snapshot}` };
  },

  async browser_screenshot_tab(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const format = (input.format as 'png' | 'jpeg' | undefined) ?? 'png';
    const quality = input.quality ?? 80;
    const mimeType = format === 'jpeg' ? 'image/jpeg' : 'image/png';
    const target = input.selector ?? null;
    const ref = input.ref ?? null;
    let data: string;
    let clip: { x: number; y: number; width: number; height: number } | null = null;
    if (input.fullPage === true || target || ref) {
      // Beyond the viewport or one element: the DevTools protocol, which needs no focus.
      if (target || ref) {
        const r = await runInTab(tab.id!, elementBox, [target, ref]);
        if ('error' in r) throw pageFindError(r.error);
        clip = r;
      }
      data = await withDebugger(tab.id!, async (send) => {
        if (!clip) {
          const m = await send<{ cssContentSize: { width: number; height: number } }>('Page.getLayoutMetrics');
          clip = { x: 0, y: 0, width: Math.ceil(m.cssContentSize.width), height: Math.ceil(m.cssContentSize.height) };
        }
        const shot = await send<{ data: string }>('Page.captureScreenshot', {
          format,
          ...(format === 'jpeg' ? { quality } : {}),
          captureBeyondViewport: true,
          clip: { ...clip, scale: 1 },
        });
        return shot.data;
      });
    } else {
      // The visible part: captureVisibleTab shoots a window's active tab, so bring ours to the front.
      if (!tab.active) await chrome.tabs.update(tab.id!, { active: true });
      await assertStillShown(tab.id!, tab.windowId);
      let dataUrl: string;
      try {
        dataUrl = await captureSpaced(tab.windowId, { format, quality });
      } catch (err) {
        throw new ToolError(`Could not capture tab ${tab.id}: ${(err as Error).message}`, { code: 'not_available', category: 'internal', retryable: true });
      }
      // captureVisibleTab shoots whatever the window shows: make sure that was still this tab, on an allowed page.
      await assertStillShown(tab.id!, tab.windowId);
      data = dataUrl.slice(dataUrl.indexOf(',') + 1);
    }
    return {
      value: { tabId: tab.id, url: tab.url, format, bytes: Math.floor((data.length * 3) / 4), ...(clip ? { clip } : {}) },
      images: [{ data, mimeType }],
    };
  },
} satisfies Partial<Handlers>;
