/**
 * The console group: messages of the page in a tab, read through the DevTools protocol.
 *
 * Chrome keeps the console messages of every document (V8 for console.* calls and uncaught
 * exceptions, Blink for browser messages such as failed loads) whether or not a debugger is
 * attached, and replays them to a session that enables Runtime / Log. So each call attaches,
 * enables, collects the replay, and releases the debugger: messages from before the first call are
 * included, nothing stays attached between calls, and a navigation starts a fresh list.
 *
 * Messages of a frame showing a page the tools may not use (a hidden file framed by a file://
 * page, another extension's frame), or of a script loaded from such a page (a file:// page's
 * <script src="file:///home/u/.aws/credentials"> fails to parse, and the error quotes the file),
 * are left out: they are that page's content.
 */
import { CONSOLE_ENTRY_MAX_CHARS, CONSOLE_LOGS_DEFAULT_LIMIT } from '../../server/protocol/limits.ts';
import { withDebugger, type CdpSend } from './debugger.ts';
import { debuggerEvents, guardTab, remoteObjectText, serialPerTab } from './cdp-events.ts';
import { frameShowsRefusedPage } from './frame-policy.ts';
import type { Handlers } from './types.ts';

export type ConsoleLevel = 'debug' | 'info' | 'warning' | 'error';
const LEVEL_RANK: Record<ConsoleLevel, number> = { debug: 0, info: 1, warning: 2, error: 3 };

export interface ConsoleEntry {
  level: ConsoleLevel;
  /** console method (log, warn, …), "exception", or the browser message source (network, security, …). */
  type: string;
  text: string;
  url: string | null;
  /** 1-based, as shown in DevTools. */
  line: number | null;
  /** ms since the epoch */
  timestamp: number;
  /** Set when text was cut at CONSOLE_ENTRY_MAX_CHARS. */
  truncated?: true;
}

type RemoteObject = Parameters<typeof remoteObjectText>[0];
interface CallFrame { url: string; lineNumber: number }

/** console method → level (what DevTools' level filter does). */
function apiLevel(type: string): ConsoleLevel {
  if (type === 'error' || type === 'assert') return 'error';
  if (type === 'warning') return 'warning';
  if (type === 'debug') return 'debug';
  return 'info';
}

/** console.log('%s is %d', a, b) substitution, then the remaining arguments space-separated. */
export function formatConsoleArgs(args: RemoteObject[]): string {
  if (args.length === 0) return '';
  const rest = args.slice(1);
  let head = remoteObjectText(args[0]!);
  if (args[0]!.type === 'string' && /%[sdifoOc]/.test(head)) {
    head = head.replace(/%([sdifoOc%])/g, (m, k: string) => {
      if (k === '%') return '%';
      const a = rest.shift();
      if (!a) return m;
      if (k === 'c') return ''; // CSS styling: no text
      if (k === 'd' || k === 'i') return a.type === 'number' ? String(Math.trunc(Number(a.value))) : 'NaN';
      return remoteObjectText(a);
    });
  }
  return [head, ...rest.map(remoteObjectText)].join(' ');
}

function fromApiCall(p: { type: string; args: RemoteObject[]; timestamp: number; stackTrace?: { callFrames: CallFrame[] } }): ConsoleEntry | null {
  if (p.type === 'endGroup') return null;
  const top = p.stackTrace?.callFrames[0];
  const text = p.type === 'assert' ? `Assertion failed${p.args.length ? `: ${formatConsoleArgs(p.args)}` : ''}` : formatConsoleArgs(p.args);
  return { level: apiLevel(p.type), type: p.type, text, url: top?.url || null, line: top ? top.lineNumber + 1 : null, timestamp: p.timestamp };
}

function fromException(p: { timestamp: number; exceptionDetails: { text: string; url?: string; lineNumber?: number; exception?: RemoteObject } }): ConsoleEntry {
  const d = p.exceptionDetails;
  const detail = d.exception?.description ?? (d.exception ? remoteObjectText(d.exception) : '');
  return { level: 'error', type: 'exception', text: detail ? `${d.text} ${detail}`.trim() : d.text, url: d.url || null, line: d.lineNumber !== undefined ? d.lineNumber + 1 : null, timestamp: p.timestamp };
}

function fromLogEntry(p: { entry: { source: string; level: string; text: string; url?: string; lineNumber?: number; timestamp: number } }): ConsoleEntry {
  const e = p.entry;
  const level: ConsoleLevel = e.level === 'verbose' ? 'debug' : e.level === 'warning' || e.level === 'error' ? e.level : 'info';
  return { level, type: e.source, text: e.text, url: e.url || null, line: e.lineNumber !== undefined ? e.lineNumber + 1 : null, timestamp: e.timestamp };
}

/** Objects resolved to JSON per call (newest messages first); the rest show their description. */
const MAX_OBJECT_RESOLVES = 200;
const TO_JSON = `function () {
  try {
    const s = JSON.stringify(this, (k, v) => (typeof v === 'bigint' ? String(v) : v));
    if (s !== undefined) return s.length > 2000 ? s.slice(0, 2000) + '…' : s;
  } catch {}
  return String(this);
}`;

/**
 * Replayed messages carry no object previews, only "Object" / "Array(2)": plain objects and arrays
 * are rendered as JSON by the page (by value), the way a developer would read them.
 */
async function resolveObjects(send: CdpSend, raw: { method: string; params: Record<string, unknown> }[]): Promise<void> {
  let budget = MAX_OBJECT_RESOLVES;
  for (let i = raw.length - 1; i >= 0 && budget > 0; i--) {
    if (raw[i]!.method !== 'Runtime.consoleAPICalled') continue;
    for (const arg of (raw[i]!.params.args ?? []) as (RemoteObject & { objectId?: string })[]) {
      if (arg.type !== 'object' || !arg.objectId || (arg.subtype !== undefined && arg.subtype !== 'array') || budget-- <= 0) continue;
      const r = await send<{ result: { value?: unknown } }>('Runtime.callFunctionOn', { objectId: arg.objectId, functionDeclaration: TO_JSON, returnByValue: true, silent: true }).catch(() => null);
      if (typeof r?.result.value === 'string') arg.json = r.result.value;
    }
  }
}

interface FrameTree {
  frame: { id: string; url: string };
  childFrames?: FrameTree[];
}

/**
 * The messages of `raw` that come from neither a frame nor a script showing a page the tools may
 * not use: judged by the frame of the message's execution context, the script's URL and every URL
 * of its stack.
 */
async function withoutRefusedPages(send: CdpSend, raw: { method: string; params: Record<string, unknown> }[], contexts: Map<number, string>): Promise<typeof raw> {
  const frameUrls = new Map<string, string>();
  const tree = await send<{ frameTree: FrameTree }>('Page.getFrameTree').catch(() => null);
  const walk = (n: FrameTree) => {
    frameUrls.set(n.frame.id, n.frame.url);
    for (const c of n.childFrames ?? []) walk(c);
  };
  if (tree) walk(tree.frameTree);
  return raw.filter(({ params }) => {
    const p = params as {
      executionContextId?: number;
      stackTrace?: { callFrames?: CallFrame[] };
      exceptionDetails?: { executionContextId?: number; url?: string; stackTrace?: { callFrames?: CallFrame[] } };
      entry?: { url?: string; stackTrace?: { callFrames?: CallFrame[] } };
    };
    const contextId = p.executionContextId ?? p.exceptionDetails?.executionContextId;
    const frameId = contextId === undefined ? undefined : contexts.get(contextId);
    const urls = [
      frameId === undefined ? undefined : frameUrls.get(frameId),
      p.exceptionDetails?.url,
      p.entry?.url,
      ...[p.stackTrace, p.exceptionDetails?.stackTrace, p.entry?.stackTrace].flatMap((t) => (t?.callFrames ?? []).map((f) => f.url)),
    ];
    return !urls.some((u) => typeof u === 'string' && u !== '' && frameShowsRefusedPage(u) !== null);
  });
}

/** Attach, collect what Chrome replays for the current document, optionally clear it, release. */
async function readConsole(tabId: number, clear: boolean): Promise<ConsoleEntry[]> {
  return guardTab(tabId, () =>
    serialPerTab('console', tabId, () =>
      withDebugger(tabId, async (send) => {
        let raw: { method: string; params: Record<string, unknown> }[] = [];
        /** Execution context id → DevTools frame id (Runtime.enable reports every context before it replays messages). */
        const contexts = new Map<number, string>();
        const off = debuggerEvents(tabId, (method, params) => {
          if (method === 'Runtime.consoleAPICalled' || method === 'Runtime.exceptionThrown' || method === 'Log.entryAdded') raw.push({ method, params: params as Record<string, unknown> });
          if (method === 'Runtime.executionContextCreated') {
            const c = (params as { context?: { id?: number; auxData?: { frameId?: string } } }).context;
            if (typeof c?.id === 'number' && typeof c.auxData?.frameId === 'string') contexts.set(c.id, c.auxData.frameId);
          }
        });
        try {
          // Commands to one target run in the order sent, and events and replies share one ordered
          // channel: sent together (one round trip, not three), once the evaluate answers every
          // replayed message has been delivered.
          await Promise.all([send('Runtime.enable'), send('Log.enable'), send('Runtime.evaluate', { expression: '0', silent: true }).catch(() => {})]);
          off();
          raw = await withoutRefusedPages(send, raw, contexts);
          await resolveObjects(send, raw);
          if (clear) await Promise.all([send('Runtime.discardConsoleEntries'), send('Log.clear')]);
        } finally {
          off();
          // Disabled again so the next call's enable replays (enable on an enabled domain does not).
          await Promise.all([send('Log.disable').catch(() => {}), send('Runtime.disable').catch(() => {})]);
        }
        const entries: ConsoleEntry[] = [];
        for (const { method, params } of raw) {
          const p = params as never;
          const e = method === 'Runtime.consoleAPICalled' ? fromApiCall(p) : method === 'Runtime.exceptionThrown' ? fromException(p) : fromLogEntry(p);
          if (!e) continue;
          if (e.text.length > CONSOLE_ENTRY_MAX_CHARS) {
            e.text = `${e.text.slice(0, CONSOLE_ENTRY_MAX_CHARS)}…`;
            e.truncated = true;
          }
          entries.push(e);
        }
        return entries.sort((a, b) => a.timestamp - b.timestamp);
      }),
    ),
  );
}

export const consoleTools = {
  async browser_get_console_logs(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const min = LEVEL_RANK[input.level ?? 'debug'];
    const limit = input.limit ?? CONSOLE_LOGS_DEFAULT_LIMIT;
    const all = (await readConsole(tab.id!, input.clear === true)).filter((e) => LEVEL_RANK[e.level] >= min);
    const logs = all.slice(-limit);
    return { value: { tabId: tab.id, url: tab.url ?? '', count: logs.length, omitted: all.length - logs.length, cleared: input.clear === true, logs } };
  },

  async browser_clear_console_logs(input, ctx) {
    const tab = await ctx.tab(input.tabId);
    const had = await readConsole(tab.id!, true);
    return { value: { tabId: tab.id, cleared: had.length } };
  },
} satisfies Partial<Handlers>;
