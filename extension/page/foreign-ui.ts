/**
 * Other extensions' own controls drawn in the page (foreignUiHost, dom.ts: a password manager's
 * menu with the user's accounts and one-time codes in a closed shadow root) kept out of a
 * screenshot or PDF: while it is taken each such host is pinned display:none !important (with
 * transition-property:none, so that a page's transition on display cannot keep it drawn), inline,
 * which page stylesheets, animations and @media print rules cannot override, and the documents are
 * watched. A page (or the extension) restyling a pinned host, moving it (a page's shadow root
 * could slot it under ::slotted !important rules, which beat the pin), or adding another such
 * host while the capture runs is told to the caller, which drops the image (captureHidingForeignUi,
 * extension/tools/capture-foreign-ui.ts). The host's own :host !important rules beat the pin too:
 * a host still drawn after pinning is named, and no capture is taken.
 */
import { foreignUiHost } from './dom.ts';

type DomApi = { dom?: { openOrClosedShadowRoot?: (el: HTMLElement) => ShadowRoot | null } };

/** Where the isolated world keeps the pins of each capture, by token. */
const STORE = 'opentabs.foreignUiPins';
/** Elements looked at per document at most (the page's and its shadow roots'). */
const ELEMENTS_MAX = 1_000_000;
/** Added elements remembered per capture at most; more counts as a change. */
const ADDED_MAX = 10_000;
/**
 * Pins left this long (the worker that set them stopped) are undone, so that the user's own
 * extension does not stay hidden; a capture running longer than this is told of a change.
 */
const PIN_MAX_MS = 120_000;
/** How long a shown page may take to draw a frame without the pinned hosts. */
const FRAME_WAIT_MS = 200;

/** A host pinned hidden: its inline values before, and the captures holding it (captures of one tab can overlap). */
type Pin = { el: HTMLElement; display: [string, string]; transition: [string, string]; holders: Set<string> };
type Pins = { pins: Pin[]; observer: MutationObserver; added: Element[]; changed: boolean };
/** Where the isolated world keeps the pinned hosts, whichever capture pinned them. */
const HELD = 'opentabs.foreignUiHeld';

function closedRoot(el: Element): ShadowRoot | null {
  if (el.shadowRoot || !(el instanceof HTMLElement)) return null;
  try {
    return (globalThis as { chrome?: DomApi }).chrome?.dom?.openOrClosedShadowRoot?.(el) ?? null;
  } catch {
    return null;
  }
}

/**
 * The hosts of other extensions' controls under `start` (its shadow roots too, except those
 * hosts' own), and the roots walked; null past ELEMENTS_MAX.
 */
function foreignHosts(start: Document | ShadowRoot | Element): { hosts: HTMLElement[]; roots: (Document | ShadowRoot)[] } | null {
  const hosts: HTMLElement[] = [];
  const roots: (Document | ShadowRoot)[] = [];
  const todo: (Document | ShadowRoot | Element)[] = [start];
  let seen = 0;
  while (todo.length) {
    const node = todo.pop()!;
    if (!(node instanceof Element)) roots.push(node);
    const els = node instanceof Element ? [node, ...node.querySelectorAll('*')] : node.querySelectorAll('*');
    for (const el of els) {
      if (++seen > ELEMENTS_MAX) return null;
      if (el.shadowRoot) {
        todo.push(el.shadowRoot);
        continue;
      }
      // Only custom elements: foreignUiHost needs one, and closed roots the page puts on standard
      // elements are not looked into, as the snapshot does not.
      if (!el.localName.includes('-')) continue;
      const closed = closedRoot(el);
      if (!closed) continue;
      if (foreignUiHost(el)) hosts.push(el as HTMLElement);
      else todo.push(closed);
    }
  }
  return { hosts, roots };
}

/** What the watch of capture `token` makes of mutation records: pinned hosts restyled or moved, elements added. */
function noteChanges(token: string, records: MutationRecord[]): void {
  const entry = store().get(token);
  if (!entry) return;
  const pinned = (n: Node) => entry.pins.some((p) => p.el === n || (n instanceof Element && n.contains(p.el)));
  for (const r of records) {
    if (r.type === 'attributes' && pinned(r.target)) entry.changed = true;
    for (const n of r.removedNodes) if (pinned(n)) entry.changed = true;
    for (const n of r.addedNodes) {
      if (!(n instanceof Element)) continue;
      if (entry.added.length >= ADDED_MAX) entry.changed = true;
      else entry.added.push(n);
    }
  }
}

function store(): Map<string, Pins> {
  const g = globalThis as unknown as Record<string, Map<string, Pins> | undefined>;
  return (g[STORE] ??= new Map());
}

function held(): Map<HTMLElement, Pin> {
  const g = globalThis as unknown as Record<string, Map<HTMLElement, Pin> | undefined>;
  return (g[HELD] ??= new Map());
}

/** Pins `el` hidden for capture `token`. */
function hold(el: HTMLElement, token: string): Pin {
  let pin = held().get(el);
  if (!pin) {
    pin = {
      el,
      display: [el.style.getPropertyValue('display'), el.style.getPropertyPriority('display')],
      transition: [el.style.getPropertyValue('transition-property'), el.style.getPropertyPriority('transition-property')],
      holders: new Set(),
    };
    held().set(el, pin);
  }
  pin.holders.add(token);
  // Set again only when not as pinned: a write of the same values is still a change another
  // capture watching this host would see.
  for (const name of ['transition-property', 'display']) {
    if (el.style.getPropertyValue(name) !== 'none' || el.style.getPropertyPriority(name) !== 'important') el.style.setProperty(name, 'none', 'important');
  }
  return pin;
}

/** Lets go of `p` for capture `token`; the last capture holding it puts its values back, unless someone else set them meanwhile. */
function release(p: Pin, token: string): void {
  p.holders.delete(token);
  if (p.holders.size) return;
  held().delete(p.el);
  for (const [name, [value, priority]] of [['display', p.display], ['transition-property', p.transition]] as const) {
    if (p.el.style.getPropertyValue(name) !== 'none' || p.el.style.getPropertyPriority(name) !== 'important') continue;
    if (value) p.el.style.setProperty(name, value, priority);
    else p.el.style.removeProperty(name);
  }
}

/**
 * Pins every host of another extension's controls in this document hidden under `token` and
 * watches the document until showForeignUi. Says how many were pinned, and names a host still
 * drawn (its own rules beat the pin; its pins are undone then) or a document too large to look
 * through.
 */
export async function hideForeignUi(token: string): Promise<{ hidden: number } | { drawn: string } | { tooLarge: true }> {
  const found = foreignHosts(document);
  if (!found) return { tooLarge: true };
  const observer = new MutationObserver((records) => noteChanges(token, records));
  const pins = found.hosts.map((el) => hold(el, token));
  const drawn = pins.find((p) => getComputedStyle(p.el).display !== 'none');
  if (drawn) {
    for (const p of pins) release(p, token);
    return { drawn: drawn.el.localName };
  }
  for (const root of found.roots) observer.observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ['style'] });
  store().set(token, { pins, observer, added: [], changed: false });
  setTimeout(() => showForeignUi(token), PIN_MAX_MS);
  // captureVisibleTab reads what the window last drew: a frame without the hosts first.
  if (pins.length && document.visibilityState === 'visible') {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, FRAME_WAIT_MS);
      requestAnimationFrame(() => requestAnimationFrame(() => {
        clearTimeout(timer);
        resolve();
      }));
    });
  }
  return { hidden: pins.length };
}

/**
 * Undoes the pins of `token` and stops watching; `changed` when a pinned host was restyled, moved
 * or taken out, one is drawn now, or a host of another extension's controls was added meanwhile
 * (the capture may hold it). Null when this document holds no such pins (it was replaced).
 */
export function showForeignUi(token: string): { changed: boolean } | null {
  const entry = store().get(token);
  if (!entry) return null;
  noteChanges(token, entry.observer.takeRecords());
  entry.observer.disconnect();
  store().delete(token);
  let changed = entry.changed || entry.pins.some((p) => !p.el.isConnected || getComputedStyle(p.el).display !== 'none');
  for (const p of entry.pins) release(p, token);
  if (!changed) {
    for (const el of entry.added) {
      const found = foreignHosts(el);
      if (!found || found.hosts.length) {
        changed = true;
        break;
      }
    }
  }
  return { changed };
}
