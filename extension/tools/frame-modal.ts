/**
 * A frame is behind what its iframe is behind: a modal dialog open in a page above it (a <dialog>
 * shown modally, or a shown aria-modal one) leaves everything outside that dialog, the iframes
 * there and their content included, out of a user's reach, as does [inert] around the iframe.
 * The tools that set or type into a frame's field refuse it then, by the page's own rule
 * (unreachable in extension/page/dom.ts), asked of each document above the frame.
 */
import { frameKey, frameTarget, runIn } from './frames.ts';

/**
 * Why a user cannot reach what frame `frameId` of tab `tabId` holds now: the words of the first
 * page above it (nearest first) whose iframe leading to it is behind that page's open modal dialog
 * or in [inert], with which page it is; null when each one's iframe is reachable (and for the top
 * document, frame 0).
 */
export async function frameBlocked(tabId: number, frameId: number, ref?: string | null): Promise<string | null> {
  for (let id = frameId, i = 0; id !== 0 && i < 32; i++) {
    const frame = await chrome.webNavigation.getFrame({ tabId, frameId: id }).catch(() => null);
    if (!frame) return null;
    const parentId = frame.parentFrameId;
    if (parentId < 0) return null;
    const parent = await frameTarget(tabId, parentId, ref);
    const blocked = (await runIn(parent, 'unreachableFrames', [])) ?? [];
    if (blocked.length > 0) {
      // Only then is it worth finding which of the parent's iframes this frame's is.
      const [index, deep] = await frameKey(tabId, id, parentId, ref);
      const hit = blocked.find((b) => (deep >= 0 && b.deep === deep) || (deep < 0 && index >= 0 && b.index === index));
      if (hit) return `in an iframe ${hit.why} of ${parentId === 0 ? 'the page' : 'the frame holding it'}`;
    }
    id = parentId;
  }
  return null;
}
