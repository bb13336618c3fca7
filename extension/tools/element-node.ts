/**
 * Elements for the DevTools-protocol tools of input-page (upload, pseudo state, drag): found in the
 * page by CSS selector (piercing open shadow roots) or by a browser_snapshot ref, and, when a
 * DevTools node is needed, handed over through a one-off marker attribute read back in an isolated
 * world of our own (the page's scripts cannot stand in another element for it).
 */
import { ToolError } from '../shared/tool-error.ts';
import type { CdpSend } from './debugger.ts';
import { frameOfRef } from './frame-ref.ts';
import { checkedScriptTarget } from './url-policy.ts';

export const MARK_ATTR = 'data-opentabs-node';

export interface Described {
  tag: string;
  type: string;
  id: string;
  text: string;
  multiple: boolean;
}

/** In the page (ISOLATED world, where the snapshot's refs live): find the element and mark it. */
function markInPage(selector: string | null, ref: string | null, mark: string): Described | { error: string; validation?: boolean } {
  // chrome.scripting injects this function alone (serialized), so it carries its own copy of
  // the shadow-piercing query instead of importing one.
  const deepQuery = (root: Document | ShadowRoot, sel: string): Element | null => {
    const hit = root.querySelector(sel);
    if (hit) return hit;
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) {
        const inner = deepQuery(el.shadowRoot, sel);
        if (inner) return inner;
      }
    }
    return null;
  };
  let el: Element | null | undefined;
  if (ref) {
    el = (globalThis as unknown as { __opentabs_refs__?: { byRef: Map<string, Element> } }).__opentabs_refs__?.byRef.get(ref);
    if (!el || !el.isConnected) return { error: `Unknown or stale ref ${ref}; take a new browser_snapshot` };
  } else if (selector) {
    try {
      el = deepQuery(document, selector);
    } catch {
      return { error: `Invalid CSS selector: ${selector}`, validation: true };
    }
    if (!el) return { error: `No element matches ${selector}${document.querySelector('iframe, frame') ? ' (the content of the page\'s iframes is not searched; browser_snapshot gives refs for what they hold)' : ''}` };
  } else {
    return { error: 'Pass either selector or ref', validation: true };
  }
  // Added to marks already there: two calls at once on one element each find it by their own mark.
  const marks = el.getAttribute('data-opentabs-node');
  el.setAttribute('data-opentabs-node', marks ? `${marks} ${mark}` : mark);
  return {
    tag: el.tagName.toLowerCase(),
    type: el instanceof HTMLInputElement ? el.type : '',
    id: el.id,
    text: ((el as HTMLElement).innerText ?? '').trim().slice(0, 80),
    multiple: el instanceof HTMLInputElement && el.multiple,
  };
}

/** Find an element by selector or ref and mark it with a random value; returns its description and the mark. */
export async function markElement(tabId: number, selector: string | undefined, ref: string | undefined): Promise<{ el: Described; mark: string }> {
  if (selector !== undefined && ref !== undefined) {
    throw new ToolError('Pass either selector or ref, not both (they may name different elements)', { code: 'invalid_arguments', category: 'validation' });
  }
  if (frameOfRef(ref)) {
    throw new ToolError(`${ref} is an element inside an iframe, which this tool cannot reach; it works on elements of the top page`, { code: 'invalid_arguments', category: 'validation' });
  }
  const mark = crypto.randomUUID();
  const [res] = await chrome.scripting.executeScript({ target: await checkedScriptTarget(tabId), func: markInPage, args: [selector ?? null, ref ?? null, mark] });
  const r = res?.result as ReturnType<typeof markInPage> | undefined;
  if (!r) throw new ToolError(`Tab ${tabId} cannot be scripted (a browser page?)`, { code: 'not_available', category: 'validation' });
  if ('error' in r) throw new ToolError(r.error, { code: r.validation ? 'invalid_arguments' : 'not_found', category: r.validation ? 'validation' : 'not_found' });
  return { el: r, mark };
}

/** The id of an isolated world of ours in the tab's main frame (made once per document). */
export async function utilityWorld(send: CdpSend): Promise<number> {
  const tree = await send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree');
  const w = await send<{ executionContextId: number }>('Page.createIsolatedWorld', { frameId: tree.frameTree.frame.id, worldName: 'opentabs-utility', grantUniveralAccess: false });
  return w.executionContextId;
}

/** The marked element as a DevTools remote object (in our isolated world); the mark is removed. */
export async function markedObject(send: CdpSend, mark: string): Promise<string> {
  const contextId = await utilityWorld(send);
  const expression = `(() => {
    const sel = '[${MARK_ATTR}~="${mark}"]';
    const find = (root) => {
      const hit = root.querySelector(sel);
      if (hit) return hit;
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) { const inner = find(el.shadowRoot); if (inner) return inner; }
      return null;
    };
    const el = find(document);
    if (el) {
      const rest = (el.getAttribute('${MARK_ATTR}') ?? '').split(' ').filter((m) => m && m !== '${mark}');
      if (rest.length) el.setAttribute('${MARK_ATTR}', rest.join(' '));
      else el.removeAttribute('${MARK_ATTR}');
    }
    return el;
  })()`;
  const r = await send<{ result: { objectId?: string; subtype?: string } }>('Runtime.evaluate', { expression, contextId, returnByValue: false });
  if (!r.result.objectId || r.result.subtype === 'null') throw new ToolError('The element went away before it could be used (the page changed); try again', { code: 'not_found', category: 'not_found', retryable: true });
  return r.result.objectId;
}

/** Find by selector/ref and return a DevTools remote object id for the element. */
export async function elementObject(tabId: number, send: CdpSend, selector: string | undefined, ref: string | undefined): Promise<{ el: Described; objectId: string }> {
  const { el, mark } = await markElement(tabId, selector, ref);
  return { el, objectId: await markedObject(send, mark) };
}
