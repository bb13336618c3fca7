/**
 * Which frames show a page the tools may not use, by URL alone: the URL policy (url-policy.ts)
 * as it applies to a frame. Kept apart from frames.ts (which injects scripts into frames) so that
 * modules the script runner itself needs, such as dialogs.ts, can ask without importing it.
 */
import { refusalReason } from './url-policy.ts';

/**
 * Why a frame's URL is refused, or null. An about:srcdoc (or about:blank) frame shows what its
 * parent wrote into it: its parent's verdict is its own (the parent is checked too).
 */
export function frameRefusal(url: string): string | null {
  if (url === 'about:srcdoc' || url === 'about:blank') return null;
  return refusalReason(url);
}

/**
 * Why a frame showing `url` holds a page the tools may not use, or null: what keeps its tab from
 * being captured (secret-on-page.ts) and input from going into it (input-guard.ts). A file:// page
 * the user allowed may hold iframes of hidden files (file:///home/u/.ssh/id_rsa,
 * ~/.aws/credentials, MCP client configs) or of the config folder, which Chrome lets a file://
 * page show, and another extension's page can sit in an iframe of a site. Frames of the page's
 * own making (about:blank, about:srcdoc, data:, and blob: of a web or opaque origin) and Chrome's
 * error page of a frame that did not load show nothing the tools are kept from (frameRefusal
 * still keeps scripts out of data: and blob: frames).
 */
export function frameShowsRefusedPage(url: string): string | null {
  if (url === '' || url === 'about:blank' || url === 'about:srcdoc') return null;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol === 'data:' || u.protocol === 'chrome-error:') return null;
  if (u.protocol === 'blob:' || u.protocol === 'filesystem:') {
    // blob:https://site/uuid is the site's; blob:null/uuid an opaque origin's; blob:chrome-extension://… an extension's.
    const inner = u.pathname;
    return inner.startsWith('null/') || inner === 'null' ? null : refusalReason(inner);
  }
  return refusalReason(url);
}
