/**
 * Elements for the DevTools-protocol tools of input-page (upload, pseudo state, drag): found in the
 * page by CSS selector (piercing open shadow roots) or by a browser_snapshot ref, and, when a
 * DevTools node is needed, handed over through a one-off marker attribute read back in an isolated
 * world of our own (the page's scripts cannot stand in another element for it).
 */
import { ToolError } from '../shared/tool-error.ts';
import type { CdpSend } from './debugger.ts';
import { frameOfRef } from './frame-ref.ts';
import type { Described } from '../page/acting.ts';
import { runPage } from './page-run.ts';
import { checkedScriptTarget } from './url-policy.ts';

export const MARK_ATTR = 'data-opentabs-node';

export type { Described };

/** Find an element by selector or ref and mark it with a random value; returns its description and the mark. */
export async function markElement(tabId: number, selector: string | undefined, ref: string | undefined): Promise<{ el: Described; mark: string }> {
  if (selector !== undefined && ref !== undefined) {
    throw new ToolError('Pass either selector or ref, not both (they may name different elements)', { code: 'invalid_arguments', category: 'validation' });
  }
  if (frameOfRef(ref)) {
    throw new ToolError(`${ref} is an element inside an iframe, which this tool cannot reach; it works on elements of the top page`, { code: 'invalid_arguments', category: 'validation' });
  }
  const mark = crypto.randomUUID();
  const r = await runPage(await checkedScriptTarget(tabId), 'markInPage', [selector ?? null, ref ?? null, mark]);
  if (!r) throw new ToolError(`Tab ${tabId} cannot be scripted (a browser page?)`, { code: 'not_available', category: 'validation' });
  if ('error' in r) throw new ToolError(r.error, { code: r.validation ? 'invalid_arguments' : 'not_found', category: r.validation ? 'validation' : 'not_found' });
  return { el: r, mark };
}

/** The id of an isolated world of ours in the tab's main frame, or in the frame of DevTools id `frameId` (made once per document). */
export async function utilityWorld(send: CdpSend, frameId?: string): Promise<number> {
  const id = frameId ?? (await send<{ frameTree: { frame: { id: string } } }>('Page.getFrameTree')).frameTree.frame.id;
  const w = await send<{ executionContextId: number }>('Page.createIsolatedWorld', { frameId: id, worldName: 'opentabs-utility', grantUniveralAccess: false });
  return w.executionContextId;
}

/** The marked element as a DevTools remote object (in our isolated world of the main frame, or of the frame `frameId` names); the mark is removed. */
export async function markedObject(send: CdpSend, mark: string, frameId?: string): Promise<string> {
  const contextId = await utilityWorld(send, frameId);
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
