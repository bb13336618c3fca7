/**
 * The in-page halves of refused-frame-reach.ts, run in a document's ISOLATED world through
 * chrome.scripting (each uses nothing from outside itself): the frame-holding elements of a
 * document that no frame the tools may use claims, whether they can paint or take focus, and the
 * pins that keep them so while a capture or a shortcut key is under way.
 */

/**
 * Runs in a document (ISOLATED world) before its frames are asked where they are: notes the
 * window's frames and watches for frame-holding elements (or shadow hosts, which may hold one)
 * added, removed or moved, under `token`. Frames say where they are by their index among the
 * window's frames, which such a change shifts (remove the iframe before a refused frame's, and
 * the refused frame takes the index another frame said was its own); frameOwners answers nothing
 * when one happened in between.
 */
export function watchFrames(token: string, store: string): boolean {
  const tags = ['iframe', 'frame', 'object', 'embed', 'fencedframe', 'portal'];
  const selector = tags.join(',');
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  const shadowOf = (el: Element) => (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
  const frames: unknown[] = [];
  for (let i = 0; i < window.length; i++) frames.push(window[i]);
  const entry = { moved: false, frames, observer: null as MutationObserver | null, judge: (_: MutationRecord[]) => {} };
  /** Whether `n` is, holds or may hold (in a shadow root) a frame-holding element; unsure past 5000 elements. */
  const holdsFrames = (n: Node): boolean => {
    if (!(n instanceof Element)) return false;
    if (tags.includes(n.localName) || n.querySelector(selector) || shadowOf(n)) return true;
    const all = n.querySelectorAll('*');
    if (all.length > 5_000) return true;
    for (const el of all) if (shadowOf(el)) return true;
    return false;
  };
  entry.judge = (records) => {
    for (const r of records) for (const n of [...r.addedNodes, ...r.removedNodes]) if (holdsFrames(n)) entry.moved = true;
  };
  entry.observer = new MutationObserver((records) => entry.judge(records));
  const observe = (root: Document | ShadowRoot, depth: number) => {
    entry.observer!.observe(root, { childList: true, subtree: true });
    for (const el of root.querySelectorAll('*')) {
      const shadow = shadowOf(el);
      if (shadow && depth < 32) observe(shadow, depth + 1);
    }
  };
  observe(document, 0);
  const g = globalThis as unknown as Record<string, Map<string, typeof entry>>;
  (g[store] ??= new Map()).set(token, entry);
  return true;
}

/**
 * Runs in a document (ISOLATED world): for each frame-holding element whose frame is not one of
 * `claimed` (indexes among window.frames), whether it can paint and take focus. With `pin` and
 * none of them able to `pin.reach`, each is pinned hidden and watched until unpinOwners(pin.token).
 */
export function frameOwners(claimed: number[], watch: { token: string; store: string }, pin: { token: string; reach: 'paint' | 'focus' | 'hit' | 'inert'; store: string } | null): { paint: boolean; focus: boolean; hit: boolean; inert: boolean }[] | null {
  const watches = (globalThis as unknown as Record<string, Map<string, { moved: boolean; frames: unknown[]; observer: MutationObserver | null; judge: (r: MutationRecord[]) => void }> | undefined>)[watch.store];
  const seen = watches?.get(watch.token);
  watches?.delete(watch.token);
  if (!seen) return null;
  seen.judge(seen.observer?.takeRecords() ?? []);
  seen.observer?.disconnect();
  // Frames added, removed or moved since the frames said where they are: their indexes may name others now.
  if (seen.moved || seen.frames.length !== window.length || seen.frames.some((w, i) => window[i] !== w)) return null;
  const tags = ['iframe', 'frame', 'object', 'embed', 'fencedframe', 'portal'];
  const dom = (globalThis as unknown as { chrome?: { dom?: { openOrClosedShadowRoot?: (e: HTMLElement) => ShadowRoot | null } } }).chrome?.dom;
  const owners: HTMLElement[] = [];
  const walk = (root: Document | ShadowRoot, depth: number) => {
    for (const el of root.querySelectorAll('*')) {
      if (tags.includes(el.localName) && el instanceof HTMLElement) owners.push(el);
      const shadow = (el instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(el) : null) ?? el.shadowRoot;
      if (shadow && depth < 32) walk(shadow, depth + 1);
    }
  };
  walk(document, 0);
  const left = owners.filter((el) => {
    const win = (el as HTMLIFrameElement).contentWindow ?? null;
    if (!win) return true;
    for (let i = 0; i < window.length; i++) if (window[i] === win) return !claimed.includes(i);
    return true;
  });
  const hostChild = (el: HTMLElement) => {
    const host = el.parentElement;
    return !!host && !!((dom?.openOrClosedShadowRoot?.(host) ?? null) ?? host.shadowRoot);
  };
  const states = left.map((el) => {
    // A child of a shadow host may be slotted: the !important rules of that shadow root for it
    // (::slotted) win over its own inline !important style, so a style pin cannot hold it.
    // The inert attribute holds whatever the styles say (checked: a page's interactivity:auto
    // !important leaves an inert iframe unfocusable, and hit testing passes it by), so such a
    // child can be held inert, for keys and for a press alike.
    if (hostChild(el)) return { paint: true, focus: true, hit: false, inert: false };
    const laidOut = el.getClientRects().length > 0;
    const visible = typeof el.checkVisibility === 'function' ? el.checkVisibility({ visibilityProperty: true } as CheckVisibilityOptions) : getComputedStyle(el).visibility === 'visible';
    const box = el.getBoundingClientRect();
    // hit: what the 'hit' pin (pointer-events:none) cannot hold; any other element it holds.
    return { paint: laidOut && visible && box.width > 0 && box.height > 0, focus: laidOut, hit: false, inert: false };
  });
  if (pin && !states.some((s) => s[pin.reach])) {
    // '@inert': the HTML inert attribute (an inert iframe cannot take focus, so no key goes into
    // its frame); the others are inline styles. Keys pin it: a shortcut together with display:none.
    const props: [string, string][] = pin.reach === 'paint' ? [['visibility', 'hidden'], ['transition-property', 'none']] : pin.reach === 'hit' ? [['pointer-events', 'none']] : pin.reach === 'inert' ? [['@inert', '']] : [['display', 'none'], ['@inert', '']];
    const styles = props.filter(([p]) => !p.startsWith('@'));
    const attrs = props.filter(([p]) => p.startsWith('@')).map(([p]) => p.slice(1));
    type Held = { n: number; value: string; priority: string; pinned: string };
    type Entry = { els: HTMLElement[]; props: string[]; disturbed: boolean; observer: MutationObserver | null; judge: (records: MutationRecord[]) => void; settle: () => void };
    const g = globalThis as unknown as Record<string, { pins: Map<string, Entry>; held: Map<HTMLElement, Map<string, Held>> } | undefined>;
    const store = (g[pin.store] ??= { pins: new Map(), held: new Map() });
    // Pins of calls under way (a screenshot and a key at once) watch the same elements: what the
    // page changed so far is theirs, the change made here is not.
    for (const other of store.pins.values()) other.judge(other.observer?.takeRecords() ?? []);
    // For a press, a shadow host's child is held inert (its pointer-events pin may not hold).
    const hosted = new Set(pin.reach === 'hit' ? left.filter(hostChild) : []);
    const propsOf = (el: HTMLElement): [string, string][] => (hosted.has(el) ? [...props, ['@inert', '']] : props);
    for (const el of left) {
      const held = store.held.get(el) ?? new Map<string, Held>();
      store.held.set(el, held);
      for (const [p, v] of propsOf(el)) {
        const h = held.get(p);
        const attr = p.startsWith('@') ? p.slice(1) : null;
        if (h) h.n++;
        // An attribute the element had already is the page's own: it stays when unpinned.
        else if (attr) held.set(p, { n: 1, value: el.hasAttribute(attr) ? 'had' : '', priority: '', pinned: v });
        else held.set(p, { n: 1, value: el.style.getPropertyValue(p), priority: el.style.getPropertyPriority(p), pinned: v });
        if (attr) el.setAttribute(attr, v);
        else el.style.setProperty(p, v, 'important');
      }
    }
    for (const other of store.pins.values()) other.observer?.takeRecords();
    const entry: Entry = { els: left, props: [...props.map(([p]) => p), ...(hosted.size && !attrs.includes('inert') ? ['@inert'] : [])], disturbed: false, observer: null, judge: () => {}, settle: () => {} };
    // Pages and extensions restyle their iframes as they are used (moved, shown on focus and hidden
    // again): only a pinned property going, at any moment, counts, since only then could the frame
    // paint, take focus or be hit. Each style the element had after a change is the next change's
    // old value, or its style now.
    const probe = document.createElement('div');
    const pinHeld = (name: string, value: string | null) => {
      // A pinned attribute holds while it is there.
      if (name !== 'style') return value !== null;
      probe.setAttribute('style', value ?? '');
      return styles.every(([p, v]) => probe.style.getPropertyValue(p) === v && probe.style.getPropertyPriority(p) === 'important');
    };
    const changed = new Map<Node, Set<string>>();
    // A shadow root's ::slotted !important rules beat an element's inline !important style: a
    // pinned element made a shadow host's child (attachShadow on its parent, or moveBefore into a
    // host, which keeps its frame loaded) may be shown or hit whatever its pin says. Such an
    // element moved at any moment, or found a host's child, counts as the pin going (one taken
    // out of the document for good does not).
    const parents = new Map<Node, Node | null>(left.map((el) => [el, el.parentNode]));
    const moved = new Set<Node>();
    const slottable = (el: Node) => {
      const host = (el as Element).parentElement;
      return !!host && !!((host instanceof HTMLElement ? dom?.openOrClosedShadowRoot?.(host) : null) ?? host.shadowRoot);
    };
    entry.judge = (records) => {
      for (const r of records) {
        if (r.type === 'childList') {
          for (const n of r.removedNodes) if (parents.has(n)) moved.add(n);
          continue;
        }
        const name = r.attributeName ?? 'style';
        const seen = changed.get(r.target) ?? new Set<string>();
        if (seen.has(name) && !pinHeld(name, r.oldValue)) entry.disturbed = true;
        seen.add(name);
        changed.set(r.target, seen);
      }
    };
    entry.settle = () => {
      for (const [t, names] of changed) for (const name of names) if (!pinHeld(name, (t as Element).getAttribute(name))) entry.disturbed = true;
      for (const [el, parent] of parents) if (el.isConnected && (moved.has(el) || el.parentNode !== parent || (slottable(el) && !hosted.has(el as HTMLElement)))) entry.disturbed = true;
    };
    entry.observer = new MutationObserver((records) => entry.judge(records));
    const watched = [...(styles.length ? ['style'] : []), ...attrs];
    // One observe() per node (a second one replaces the first's options): an <object>'s fallback may hold an iframe.
    const nodes = new Set<Node>([...left, ...[...parents.values()].filter((n): n is Node => n !== null)]);
    for (const n of nodes) {
      const pinnedHere = parents.has(n);
      const holds = [...parents.values()].includes(n);
      const filter = hosted.has(n as HTMLElement) && !watched.includes('inert') ? [...watched, 'inert'] : watched;
      entry.observer.observe(n, { ...(pinnedHere ? { attributes: true, attributeFilter: filter, attributeOldValue: true } : {}), ...(holds ? { childList: true } : {}) });
    }
    store.pins.set(pin.token, entry);
  }
  return states;
}

/**
 * Runs in a document (ISOLATED world): the pins of `token` undone (an element's style is the
 * page's again once no call under way pins it; a value the page or the extension owning the iframe
 * set meanwhile stays); whether a pinned property of a pinned element was off at any moment
 * meanwhile (other restyling does not count), null when nothing was pinned there under it (the
 * document went).
 */
export function unpinOwners(token: string, store: string): { disturbed: boolean } | null {
  type Held = { n: number; value: string; priority: string; pinned: string };
  type Entry = { els: HTMLElement[]; props: string[]; disturbed: boolean; observer: MutationObserver | null; judge: (records: MutationRecord[]) => void; settle: () => void };
  const g = globalThis as unknown as Record<string, { pins: Map<string, Entry>; held: Map<HTMLElement, Map<string, Held>> } | undefined>;
  const pins = g[store];
  const entry = pins?.pins.get(token);
  if (!pins || !entry) return null;
  pins.pins.delete(token);
  entry.judge(entry.observer?.takeRecords() ?? []);
  entry.settle();
  entry.observer?.disconnect();
  for (const other of pins.pins.values()) other.judge(other.observer?.takeRecords() ?? []);
  for (const el of entry.els) {
    const held = pins.held.get(el);
    for (const p of entry.props) {
      const h = held?.get(p);
      if (!h || --h.n > 0) continue;
      held!.delete(p);
      if (p.startsWith('@')) {
        if (!h.value) el.removeAttribute(p.slice(1));
        continue;
      }
      if (el.style.getPropertyValue(p) !== h.pinned || el.style.getPropertyPriority(p) !== 'important') continue;
      if (h.value) el.style.setProperty(p, h.value, h.priority);
      else el.style.removeProperty(p);
    }
    if (held && held.size === 0) pins.held.delete(el);
  }
  for (const other of pins.pins.values()) other.observer?.takeRecords();
  return { disturbed: entry.disturbed };
}

/**
 * Runs in a document (ISOLATED world): whether a pinned property of an element pinned under
 * `token` was off at any moment so far, or the element was moved (frameOwners); the pins stay.
 * Null when nothing is pinned there under it.
 */
export function pinsDisturbed(token: string, store: string): boolean | null {
  type Entry = { disturbed: boolean; observer: MutationObserver | null; judge: (records: MutationRecord[]) => void; settle: () => void };
  const entry = (globalThis as unknown as Record<string, { pins: Map<string, Entry> } | undefined>)[store]?.pins.get(token);
  if (!entry) return null;
  entry.judge(entry.observer?.takeRecords() ?? []);
  entry.settle();
  return entry.disturbed;
}

/**
 * Runs in a document (ISOLATED world): whether an element pinned under `token` that is not
 * visibility:hidden has a box holding viewport point (x, y) (pinned pointer-events:none, hit
 * testing passes it by, where a person's click would go into its frame). Null when nothing is
 * pinned there under it.
 */
export function pinnedAt(token: string, store: string, x: number, y: number): boolean | null {
  type Entry = { els: HTMLElement[] };
  const entry = (globalThis as unknown as Record<string, { pins: Map<string, Entry> } | undefined>)[store]?.pins.get(token);
  if (!entry) return null;
  return entry.els.some((el) => {
    if (!el.isConnected) return false;
    if (typeof el.checkVisibility === 'function' && !el.checkVisibility({ visibilityProperty: true } as CheckVisibilityOptions)) return false;
    return [...el.getClientRects()].some((r) => x >= r.left && x < r.right && y >= r.top && y < r.bottom);
  });
}
