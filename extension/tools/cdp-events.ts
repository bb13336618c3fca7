/**
 * What the console and network tools share on top of debugger.ts: DevTools protocol events routed
 * to per-tab listeners, a per-tab queue, and the tab_closed translation for calls whose tab went
 * away mid-call. Chrome listeners are added on first use (tests import this module without Chrome).
 */
import { ToolError } from '../shared/tool-error.ts';
import { onSessionEnded } from './debugger.ts';
import { getTab } from './tab-lookup.ts';

type EventListener = (method: string, params: unknown) => void;
type DetachListener = (reason: string) => void;

const eventListeners = new Map<number, Set<EventListener>>();
const detachListeners = new Map<number, Set<DetachListener>>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  chrome.debugger.onEvent.addListener((source, method, params) => {
    if (source.tabId === undefined) return;
    for (const l of eventListeners.get(source.tabId) ?? []) l(method, params);
  });
  // Covers Chrome's and the user's detaches and debugger.ts cutting a session (refused page).
  onSessionEnded((tabId, reason) => {
    for (const l of [...(detachListeners.get(tabId) ?? [])]) l(reason);
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    for (const l of [...(detachListeners.get(tabId) ?? [])]) l('target_closed');
  });
}

function subscribe<L>(map: Map<number, Set<L>>, tabId: number, l: L): () => void {
  install();
  let set = map.get(tabId);
  if (!set) map.set(tabId, (set = new Set()));
  set.add(l);
  return () => {
    set.delete(l);
    if (set.size === 0 && map.get(tabId) === set) map.delete(tabId);
  };
}

/** Receive the tab's DevTools events (while some debugger session on it is attached). */
export const debuggerEvents = (tabId: number, l: EventListener) => subscribe(eventListeners, tabId, l);

/** Called when the debugger leaves the tab: closed tab, user cancelled the bar, DevTools took over. */
export const onDebuggerGone = (tabId: number, l: DetachListener) => subscribe(detachListeners, tabId, l);

/** Run fn; if it fails because the tab closed meanwhile, fail with tab_closed instead. */
export async function guardTab<T>(tabId: number, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    await getTab(tabId); // throws tab_closed when the tab is gone
    if (err instanceof ToolError) throw err;
    throw new ToolError(`DevTools protocol call on tab ${tabId} failed: ${(err as Error).message ?? err}`, { code: 'internal', category: 'internal', retryable: true });
  }
}

const queues = new Map<string, Promise<unknown>>();
/** One call at a time per (kind, tab): enabling a domain twice in one session would not replay. */
export function serialPerTab<T>(kind: string, tabId: number, fn: () => Promise<T>): Promise<T> {
  const key = `${kind}:${tabId}`;
  const prev = queues.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** A CDP Runtime.RemoteObject as the text DevTools would show for it. */
export function remoteObjectText(o: {
  type: string;
  subtype?: string;
  value?: unknown;
  unserializableValue?: string;
  description?: string;
  /** JSON of the object when the caller resolved it (console.ts); preferred over the preview. */
  json?: string;
  preview?: { subtype?: string; overflow?: boolean; properties: { name: string; type: string; value?: string; subtype?: string }[] };
}): string {
  if (o.type === 'string') return String(o.value);
  if (o.type === 'undefined') return 'undefined';
  if (o.unserializableValue !== undefined) return o.unserializableValue;
  if (o.type !== 'object' && o.type !== 'function') return o.value !== undefined ? String(o.value) : (o.description ?? o.type);
  if (o.subtype === 'null') return 'null';
  if (o.json !== undefined) return o.json;
  const pv = o.preview;
  if (pv && (o.subtype === undefined || o.subtype === 'array')) {
    const show = (p: { type: string; value?: string }) => (p.type === 'string' ? JSON.stringify(p.value ?? '') : (p.value ?? p.type));
    const more = pv.overflow ? ', …' : '';
    if (o.subtype === 'array') return `[${pv.properties.map(show).join(', ')}${more}]`;
    return `{${pv.properties.map((p) => `${p.name}: ${show(p)}`).join(', ')}${more}}`;
  }
  return o.description ?? o.type;
}
