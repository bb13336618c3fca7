/**
 * browser_force_pseudo_state: make an element match :hover, :focus, :active … as DevTools' "Force
 * state" does (CSS.forcePseudoState), to read or screenshot those styles without moving the mouse.
 * Forced states live in the tab's debugger session (DOM and CSS agents), so the session is held
 * while any element of the tab has one; clearing the last one (states: []) or a navigation lets
 * it go. Forced states also end when the extension loses its connection to the server
 * (endAllForcedStates): no agent is left to clear them, and the user's page would go on showing
 * :hover, :focus … styles nothing on it asked for; and when every MCP session that forced states
 * in the tab has ended, unless a call of no session (REST) forced some too (session-owned.ts).
 * The next call on the tab says so.
 */
import { ToolError } from '../shared/tool-error.ts';
import { debuggerEvents } from './cdp-events.ts';
import { elementObject } from './element-node.ts';
import { frameOfRef } from './frame-ref.ts';
import { frameElementObject } from './frames.ts';
import { holdDebugger, type Held } from './held-debugger.ts';
import { endedSession, Makers, onSessionEnded } from './session-owned.ts';
import type { Handlers } from './types.ts';

interface TabForced {
  held: Held;
  /** DevTools node id → states forced on it. */
  nodes: Map<number, string[]>;
  ready: Promise<void>;
  offEvents: () => void;
  /** The sessions whose calls forced or cleared states in the tab. */
  makers: Makers;
}
const forced = new Map<number, TabForced>();
/** Why a tab's forced states ended by themselves, told once to the next call on it. */
const endedNotes = new Map<number, string>();

function drop(tabId: number): void {
  const t = forced.get(tabId);
  if (!t) return;
  forced.delete(tabId);
  t.offEvents();
  t.held.release();
}

/**
 * Clears every forced state of every tab and lets the sessions go (the extension lost its
 * connection to the server: the agent that forced them can no longer clear them).
 */
export async function endAllForcedStates(why: string): Promise<void> {
  await Promise.all([...forced].map(([tabId, t]) => clearAll(tabId, t, why)));
}

/** Clears every state forced in the tab and lets its session go; the next call is told why. */
async function clearAll(tabId: number, t: TabForced, why: string): Promise<void> {
  if (forced.get(tabId) === t) forced.delete(tabId);
  if (t.nodes.size) endedNotes.set(tabId, `The pseudo states forced in tab ${tabId} were cleared when ${why}; force them again if still needed.`);
  const nodes = [...t.nodes.keys()];
  t.nodes.clear();
  await Promise.all(nodes.map((nodeId) => t.held.send('CSS.forcePseudoState', { nodeId, forcedPseudoClasses: [] }).catch(() => {})));
  t.offEvents();
  t.held.release();
}

/** MCP session `session` ended: the states of each tab only it (and no REST call) forced are cleared. */
async function sessionGone(tabId: number, session: string): Promise<void> {
  const t = forced.get(tabId);
  if (t && t.makers.drop(session)) await clearAll(tabId, t, 'the MCP session that forced them ended');
}
onSessionEnded((session) => {
  for (const tabId of [...forced.keys()]) void sessionGone(tabId, session).catch(() => {});
});

/** Sessions being opened, per tab: calls arriving meanwhile share the one being opened. */
const opening = new Map<number, Promise<TabForced>>();

async function session(tabId: number): Promise<TabForced> {
  const existing = forced.get(tabId);
  if (existing) {
    await existing.ready;
    return existing;
  }
  // Two calls at once would each open a session, and the second would replace the first in
  // `forced` (its hold never released, and the first call's states seen as ended).
  const pending = opening.get(tabId);
  if (pending) return pending;
  const p = openSession(tabId);
  opening.set(tabId, p);
  try {
    return await p;
  } finally {
    opening.delete(tabId);
  }
}

async function openSession(tabId: number): Promise<TabForced> {
  const held = await holdDebugger(tabId, () => {
    const t = forced.get(tabId);
    if (t?.held === held) {
      forced.delete(tabId);
      t.offEvents();
    }
  });
  // A new document: its nodes (and their forced states) are gone.
  const offEvents = debuggerEvents(tabId, (method) => {
    if (method === 'DOM.documentUpdated' && forced.get(tabId)?.held === held) drop(tabId);
  });
  const t: TabForced = {
    held,
    nodes: new Map(),
    offEvents,
    makers: new Makers(),
    ready: (async () => {
      await held.send('DOM.enable');
      await held.send('CSS.enable');
      // Node ids are given for the document the agent was asked for (once per session and document).
      await held.send('DOM.getDocument', { depth: 0 });
    })(),
  };
  forced.set(tabId, t);
  try {
    await t.ready;
  } catch (err) {
    drop(tabId);
    throw err;
  }
  return t;
}

/** The element by selector or ref, a ref inside an iframe (fFeN) in that iframe's document. */
const lookUp = (tabId: number, send: Held['send'], selector: string | undefined, ref: string | undefined) =>
  ref !== undefined && frameOfRef(ref) ? frameElementObject(tabId, send, selector, ref) : elementObject(tabId, send, selector, ref);

export const pseudoStateTools = {
  async browser_force_pseudo_state(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const tabId = tab.id!;
    const states = [...new Set(input.states)];
    const ended = endedNotes.get(tabId);
    endedNotes.delete(tabId);
    if (states.length === 0 && !forced.has(tabId)) {
      // Nothing forced in this tab: nothing to clear (the element is still looked up, to report a wrong one).
      const { el } = await lookUp(tabId, (await session(tabId)).held.send, input.selector, input.ref).finally(() => {
        if (forced.get(tabId)?.nodes.size === 0) drop(tabId);
      });
      return { value: { tag: el.tag, states: [], forcedElements: 0, ...(ended ? { note: ended } : {}) } };
    }
    const t = await session(tabId);
    try {
      const { el, objectId } = await lookUp(tabId, t.held.send, input.selector, input.ref);
      const { nodeId } = await t.held.send<{ nodeId: number }>('DOM.requestNode', { objectId });
      await t.held.send('Runtime.releaseObject', { objectId }).catch(() => {});
      if (!nodeId) throw new ToolError('DevTools could not resolve the element; try again', { code: 'not_found', category: 'not_found', retryable: true });
      // Cancelled or timed out while a busy page held the steps above up: force nothing the
      // caller was told failed (and undo it if the page took it meanwhile).
      ctx.signal.throwIfAborted();
      await t.held.send('CSS.forcePseudoState', { nodeId, forcedPseudoClasses: states });
      if (forced.get(tabId) !== t) {
        // Every forced state ended (endAllForcedStates) while this call ran: none is kept.
        await t.held.send('CSS.forcePseudoState', { nodeId, forcedPseudoClasses: [] }).catch(() => {});
        throw new ToolError(`The pseudo states forced in tab ${tabId} ended while this call ran (${endedNotes.get(tabId) ?? 'the page navigated or the debugger left the tab'}); try again`, { code: 'not_available', category: 'validation', retryable: true });
      }
      if (ctx.signal.aborted) {
        await t.held.send('CSS.forcePseudoState', { nodeId, forcedPseudoClasses: t.nodes.get(nodeId) ?? [] }).catch(() => {});
        ctx.signal.throwIfAborted();
      }
      if (states.length) t.nodes.set(nodeId, states);
      else t.nodes.delete(nodeId);
      t.makers.add(ctx.session);
      if (endedSession(ctx.session)) {
        // The call's MCP session ended while it ran (session.ended came before this state).
        await sessionGone(tabId, ctx.session);
        ctx.signal.throwIfAborted();
      }
      const note = [ended, t.nodes.size ? (ctx.session !== undefined ? 'Held until cleared with states: [], the page navigates, or every MCP session that forced states in this tab has ended.' : 'Held until cleared with states: [] (or the page navigates).') : undefined].filter(Boolean).join(' ');
      return { value: { tag: el.tag, ...(el.id ? { id: el.id } : {}), states, forcedElements: t.nodes.size, ...(note ? { note } : {}) } };
    } finally {
      if (t.nodes.size === 0 && forced.get(tabId) === t) drop(tabId);
    }
  },
} satisfies Partial<Handlers>;
