/**
 * Frames for the element tools: a browser_snapshot ref names its frame (`e12` the top document,
 * `f7e3` element e3 of frame 7, a chrome.webNavigation frameId), scripts for it are injected into
 * exactly that frame's document once the URL policy allows the frame and each frame above it, and
 * a point found in a frame is moved into the tab's viewport by the boxes of the iframes holding it
 * (the protocol's mouse events take viewport coordinates of the top page and reach the frame there).
 */
import { ToolError } from '../shared/tool-error.ts';
import { checkedScriptTarget, redactedUrl, refusalReason } from './url-policy.ts';

export type ScriptTarget = { tabId: number; documentIds?: string[] };

/** The frame a ref names: 0 (the top document) for `eN` or no ref, the frameId for `fFeN`. */
export function frameOfRef(ref: string | null | undefined): number {
  const m = ref ? /^f(\d+)e\d+$/.exec(ref) : null;
  return m ? Number(m[1]) : 0;
}

/**
 * Why a frame's URL is refused, or null. An about:srcdoc (or about:blank) frame shows what its
 * parent wrote into it: its parent's verdict is its own (the parent is checked too).
 */
export function frameRefusal(url: string): string | null {
  if (url === 'about:srcdoc' || url === 'about:blank') return null;
  return refusalReason(url);
}

/** The frame's document as a script target, after the URL policy allowed it and every frame above it. */
export async function frameTarget(tabId: number, frameId: number, ref?: string | null): Promise<ScriptTarget> {
  if (frameId === 0) return checkedScriptTarget(tabId);
  const gone = () => new ToolError(`Unknown or stale ref ${ref ?? `in frame ${frameId}`}: its frame is gone; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
  const frame = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
  if (!frame?.documentId) throw gone();
  let f: { url: string; parentFrameId: number } | null = frame;
  for (let i = 0; f && i < 32; i++) {
    const why = frameRefusal(f.url);
    if (why) throw new ToolError(`Tools may not use the frame ${redactedUrl(f.url)} in tab ${tabId}: ${why}`, { code: 'page_not_allowed', category: 'auth' });
    if (f.parentFrameId < 0) break;
    if (f.parentFrameId === 0) {
      await checkedScriptTarget(tabId);
      break;
    }
    f = await chrome.webNavigation.getFrame({ tabId, frameId: f.parentFrameId }).catch(() => null);
    if (!f) throw gone();
  }
  return { tabId, documentIds: [frame.documentId] };
}

/** One script in one document; its result (undefined when Chrome ran it nowhere). */
export async function runIn<A extends unknown[], R>(target: ScriptTarget, func: (...args: A) => R, args: A): Promise<Awaited<R> | undefined> {
  const [res] = await chrome.scripting.executeScript({ target, world: 'ISOLATED', func: func as never, args: args as never });
  return res?.result as Awaited<R> | undefined;
}

const noop = () => 0;

/**
 * For an action a script does in the page (choose an option, scroll, fill fields): a page whose
 * main thread is busy holds an injected script and runs it once free, even when the call was given
 * up (cancelled or timed out) meanwhile. A script that does nothing goes first; once it answered
 * the page runs scripts again, and the action is injected only if the call still stands.
 */
export async function untilPageFree(target: ScriptTarget, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  await runIn(target, noop, []);
  signal.throwIfAborted();
}

/** In a frame: its index among its parent's frames (window.frames), -1 in the top document. */
export function indexInParent(): number {
  if (window.parent === window) return -1;
  for (let i = 0; i < window.parent.length; i++) if (window.parent[i] === window) return i;
  return -1;
}

/**
 * In a parent frame: bring the iframe holding frames[index] into view and return its content box
 * (where the frame's viewport starts and its size) in this document's viewport.
 */
function iframeBox(index: number) {
  const win = window[index];
  const find = (root: Document | ShadowRoot): HTMLIFrameElement | HTMLFrameElement | null => {
    for (const el of root.querySelectorAll('iframe, frame')) if ((el as HTMLIFrameElement).contentWindow === win) return el as HTMLIFrameElement;
    for (const el of root.querySelectorAll('*')) {
      const inner = el.shadowRoot ? find(el.shadowRoot) : null;
      if (inner) return inner;
    }
    return null;
  };
  const el = win ? find(document) : null;
  if (!el) return { error: 'The frame\'s iframe is gone; take a new browser_snapshot' };
  const r0 = el.getBoundingClientRect();
  if (r0.top < 0 || r0.left < 0 || r0.bottom > innerHeight || r0.right > innerWidth) el.scrollIntoView({ block: 'nearest', inline: 'nearest', behavior: 'instant' as ScrollBehavior });
  const r = el.getBoundingClientRect();
  const cs = getComputedStyle(el);
  const px = (v: string) => Number.parseFloat(v) || 0;
  return {
    x: r.left + px(cs.borderLeftWidth) + px(cs.paddingLeft),
    y: r.top + px(cs.borderTopWidth) + px(cs.paddingTop),
    width: el.clientWidth - px(cs.paddingLeft) - px(cs.paddingRight),
    height: el.clientHeight - px(cs.paddingTop) - px(cs.paddingBottom),
    viewport: { width: innerWidth, height: innerHeight },
  };
}

/**
 * In a parent frame: what is at (x, y) of its viewport, when it is not the iframe holding
 * frames[index] (null when it is): something drawn over the iframe would take a click meant for
 * the frame.
 */
function coverOfFrame(index: number, x: number, y: number): string | null {
  const win = window[index];
  let hit = document.elementFromPoint(x, y);
  for (let i = 0; i < 32 && hit?.shadowRoot; i++) {
    const inner: Element | null = hit.shadowRoot.elementFromPoint(x, y);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  if (!hit || (hit as HTMLIFrameElement).contentWindow === win) return null;
  const text = ((hit as HTMLElement).innerText ?? '').trim().slice(0, 40);
  return `<${hit.tagName.toLowerCase()}${hit.id ? ` id="${hit.id}"` : ''}${typeof hit.className === 'string' && hit.className ? ` class="${hit.className.slice(0, 60)}"` : ''}>${text ? ` ("${text}")` : ''}`;
}

export interface FrameOffset {
  x: number;
  y: number;
  /** The part of the top viewport the frame shows (its iframes' boxes, clipped by each other). */
  clip: { left: number; top: number; right: number; bottom: number };
  /**
   * What a page above the frame draws at a point of the tab's viewport over the iframe holding
   * the frame (described), or null when the point reaches the frame.
   */
  coverAt(x: number, y: number): Promise<string | null>;
}

/**
 * Where frame `frameId`'s viewport starts in the tab's viewport, after scrolling each iframe
 * holding it into view in its parent. The top document: 0,0.
 */
export async function frameOffset(tabId: number, frameId: number): Promise<FrameOffset> {
  const chain: { frameId: number; parentFrameId: number }[] = [];
  for (let id = frameId, i = 0; id !== 0 && i < 32; i++) {
    const f = await chrome.webNavigation.getFrame({ tabId, frameId: id }).catch(() => null);
    if (!f) throw new ToolError(`Frame ${frameId} is gone; take a new browser_snapshot`, { code: 'not_found', category: 'not_found' });
    chain.unshift({ frameId: id, parentFrameId: f.parentFrameId });
    id = f.parentFrameId;
  }
  let x = 0;
  let y = 0;
  let clip = { left: -Infinity, top: -Infinity, right: Infinity, bottom: Infinity };
  /** Each iframe on the way: its parent's document, its index there, and where that parent's viewport starts. */
  const levels: { parent: ScriptTarget; index: number; origin: { x: number; y: number } }[] = [];
  for (const link of chain) {
    const index = (await runIn(await frameTarget(tabId, link.frameId), indexInParent, [])) ?? -1;
    const parent = await frameTarget(tabId, link.parentFrameId);
    const box = await runIn(parent, iframeBox, [index]);
    if (!box || 'error' in box) throw new ToolError(box?.error ?? 'The frame cannot be reached', { code: 'not_found', category: 'not_found' });
    if (link.parentFrameId === 0) clip = { left: 0, top: 0, right: box.viewport.width, bottom: box.viewport.height };
    levels.push({ parent, index, origin: { x, y } });
    x += box.x;
    y += box.y;
    clip = { left: Math.max(clip.left, x), top: Math.max(clip.top, y), right: Math.min(clip.right, x + box.width), bottom: Math.min(clip.bottom, y + box.height) };
  }
  const coverAt = async (px: number, py: number) => {
    for (const l of levels) {
      const cover = await runIn(l.parent, coverOfFrame, [l.index, px - l.origin.x, py - l.origin.y]);
      if (cover) return cover;
    }
    return null;
  };
  return { x, y, clip, coverAt };
}
