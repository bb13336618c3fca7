/** In-page halves of the frame helpers (extension/tools/frames.ts): where an iframe is, and what covers it. */
import { describeElement, elementAtPoint, frameIndexOf, indexInParent, openModalDialog, shadowOf, unreachable, unreachableWords } from './dom.ts';

/**
 * The document's iframe and frame elements, those inside open shadow roots included, in tree
 * order (a shadow root's at its host). Chrome leaves an iframe inside a shadow root out of
 * window.frames, so its frame has no index there; its position in this list names it instead.
 * Like iframeByKey it uses nothing from outside itself: withFrameInput (extension/tools/frames.ts)
 * sends the source of both to the DevTools protocol.
 */
export function framesDeep(root: Document | ShadowRoot, out: Element[] = []): Element[] {
  for (const e of root.querySelectorAll('*')) {
    if (e.tagName === 'IFRAME' || e.tagName === 'FRAME') out.push(e);
    if (e.shadowRoot) framesDeep(e.shadowRoot, out);
  }
  return out;
}

/**
 * In a frame: the position of its iframe in framesDeep of the parent's document, -1 when the
 * parent's document is not reachable from here (another origin) or this is the top document.
 */
export function deepIndexInParent(): number {
  try {
    const el = window.frameElement;
    return el ? framesDeep(el.ownerDocument).indexOf(el) : -1;
  } catch {
    return -1;
  }
}

/**
 * In a frame: how its parent names its iframe — [index in window.frames, position in framesDeep]
 * (each -1 when it has none: an iframe inside a shadow root is not in window.frames; another
 * origin's parent cannot be looked into).
 */
export function frameKeyInParent(): [number, number] {
  return [indexInParent(), deepIndexInParent()];
}

/**
 * In a parent frame: its iframes (framesDeep, in that order) as the worker matches Chrome's frames
 * to them (matchFrames in extension/tools/frames.ts): each one's index among this window's frames
 * (-1 inside a shadow root), its position in framesDeep, its src.
 */
export function frameSlots(): { index: number; deep: number; src: string }[] {
  return framesDeep(document).map((el, deep) => ({ index: frameIndexOf(el), deep, src: (el as HTMLIFrameElement).src ?? '' }));
}

/**
 * In a parent frame: the iframe element a frameKeyInParent names among `all` (framesDeep of the
 * document of `parent`), or null.
 */
export function iframeByKey(all: Element[], index: number, deep: number, parent: Window = window): HTMLIFrameElement | null {
  const win = index >= 0 ? parent[index] : undefined;
  if (win) return (all.find((el) => (el as HTMLIFrameElement).contentWindow === win) as HTMLIFrameElement | undefined) ?? null;
  return deep >= 0 ? ((all[deep] as HTMLIFrameElement | undefined) ?? null) : null;
}

/** In a parent frame: the iframe element a frameKeyInParent names, or null. */
function iframeOf(index: number, deep: number): HTMLIFrameElement | null {
  return iframeByKey(framesDeep(document), index, deep);
}

/**
 * In a parent frame: bring the iframe a frameKeyInParent names into view and return its content
 * box (where the frame's viewport starts and its size) in this document's viewport.
 */
export function iframeBox(index: number, deep = -1) {
  const el = iframeOf(index, deep);
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
 * In a parent frame: what is at (x, y) of its viewport, when it is not the iframe a
 * frameKeyInParent names (null when it is): something drawn over the iframe would take a click
 * meant for the frame.
 */
export function coverOfFrame(index: number, x: number, y: number, deep = -1): string | null {
  const hit = elementAtPoint(x, y);
  if (!hit || hit === iframeOf(index, deep)) return null;
  return describeElement(hit);
}

/**
 * In a parent frame: its iframes a user cannot reach now (behind its open modal dialog, or in
 * [inert]), each as its index among this window's frames, its position in framesDeep and why
 * (unreachableWords). What a frame holds is behind whatever its iframe is behind: the worker
 * matches its frame to one of these (frameBlocked in extension/tools/frame-modal.ts).
 */
export function unreachableFrames(): { index: number; deep: number; why: string }[] {
  const modal = openModalDialog();
  const out: { index: number; deep: number; why: string }[] = [];
  if (!modal && !document.querySelector('[inert]')) return out;
  for (const [deep, el] of framesDeep(document).entries()) {
    const why = unreachable(el, modal);
    if (why) out.push({ index: frameIndexOf(el), deep, why: unreachableWords(why) });
  }
  return out;
}

/**
 * In a document: where its focus is when that is one of its iframes (keys go on into that frame),
 * as its index among this window's frames, its position in framesDeep and, when a user cannot
 * reach that iframe now, why (unreachableWords); null when the focus is not on an iframe.
 */
export function focusedFrame(): { index: number; deep: number; why: string | null } | null {
  let el: Element | null = document.activeElement;
  for (let i = 0; el && i < 32; i++) {
    const inner: Element | null = shadowOf(el)?.activeElement ?? null;
    if (!inner || inner === el) break;
    el = inner;
  }
  if (!el || (el.tagName !== 'IFRAME' && el.tagName !== 'FRAME')) return null;
  const why = unreachable(el);
  return { index: frameIndexOf(el), deep: framesDeep(document).indexOf(el), why: why ? unreachableWords(why) : null };
}
