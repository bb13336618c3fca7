/** The reading group: page text, HTML, element queries, screenshots. Each runs one script in the tab. */
import { ToolError } from '../shared/tool-error.ts';
import { getTab } from './tabs.ts';
import type { BrowserToolHandler } from './types.ts';

async function runInTab<A extends unknown[], R>(tabId: number, func: (...args: A) => R, args: A): Promise<Awaited<R>> {
  try {
    const [res] = await chrome.scripting.executeScript({ target: { tabId }, world: 'ISOLATED', func: func as never, args: args as never });
    if (res && 'error' in res && res.error) throw new Error(String((res as { error: unknown }).error));
    return res?.result as Awaited<R>;
  } catch (err) {
    const m = (err as Error).message;
    if (/Cannot access|chrome:\/\/|extensions gallery/i.test(m)) {
      throw new ToolError('not_available', `This page cannot be read by extensions (${m})`, { category: 'validation' });
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
  let nodes: Element[];
  try {
    nodes = [...document.querySelectorAll(selector)];
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

function unwrap<T extends object>(r: T | { error: string }): T {
  if ('error' in r) throw new ToolError('not_found', r.error, { category: 'not_found' });
  return r;
}

export const readingTools: Record<string, BrowserToolHandler> = {
  async browser_get_tab_content(input) {
    const tab = await getTab(input.tabId);
    const r = await runInTab(tab.id!, readPage, ['text', (input.selector as string) ?? null, (input.maxLength as number) ?? 50_000]);
    return { value: unwrap(r) };
  },

  async browser_get_page_html(input) {
    const tab = await getTab(input.tabId);
    const r = await runInTab(tab.id!, readPage, ['html', (input.selector as string) ?? null, (input.maxLength as number) ?? 200_000]);
    return { value: unwrap(r) };
  },

  async browser_query_elements(input) {
    const tab = await getTab(input.tabId);
    const r = await runInTab(tab.id!, queryPage, [String(input.selector), (input.limit as number) ?? 100, (input.attributes as string[]) ?? null]);
    return { value: unwrap(r) };
  },

  async browser_screenshot_tab(input) {
    const tab = await getTab(input.tabId);
    const format = (input.format as 'png' | 'jpeg' | undefined) ?? 'png';
    // captureVisibleTab shoots the active tab of a window: bring ours to the front first.
    if (!tab.active) await chrome.tabs.update(tab.id!, { active: true });
    let dataUrl: string;
    try {
      dataUrl = await chrome.tabs.captureVisibleTab(tab.windowId, { format, quality: (input.quality as number | undefined) ?? 80 });
    } catch (err) {
      throw new ToolError('not_available', `Could not capture tab ${tab.id}: ${(err as Error).message}`, { category: 'internal', retryable: true });
    }
    const comma = dataUrl.indexOf(',');
    const mimeType = format === 'jpeg' ? 'image/jpeg' : 'image/png';
    return { value: { tabId: tab.id, url: tab.url, format, bytes: Math.floor(((dataUrl.length - comma - 1) * 3) / 4) }, images: [{ data: dataUrl.slice(comma + 1), mimeType }] };
  },
};
