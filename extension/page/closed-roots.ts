/**
 * Whether the page's own code attached an element's shadow root (closed-roots-main.ts wraps the
 * page's attachShadow; closed-roots-isolated.ts holds, in this extension's isolated world, the
 * event type agreed with it before any page script ran). Read in the isolated world only.
 */

/** The event that carries the agreed type from the isolated half to the MAIN half, once, at document_start. */
export const CLOSED_ROOTS_HELLO = 'opentabs-closed-roots-hello';
/** Where the isolated world keeps the agreed event type. */
export const CLOSED_ROOTS_TYPE_KEY = 'opentabs.closedRootsType';

/**
 * True only when the page's code attached `el`'s shadow root through its own attachShadow. False
 * when it did not, and when nothing can tell (the document started before the extension, or in a
 * frame the scripts did not reach): such roots are then left closed. `el` may be of a parent
 * frame's document (a frame numbers its parent's iframes): the type agreed there is asked with.
 */
export function pageAttachedRoot(el: Element): boolean {
  let type: unknown;
  try {
    type = ((el.ownerDocument.defaultView ?? globalThis) as unknown as Record<string, unknown>)[CLOSED_ROOTS_TYPE_KEY];
  } catch {
    return false;
  }
  if (typeof type !== 'string' || !type) return false;
  const e = new Event(type, { cancelable: true });
  try {
    el.dispatchEvent(e);
  } catch {
    return false;
  }
  return e.defaultPrevented;
}
