/**
 * The MAIN-world adapter runtime, bundled into every dist/adapter.js. It speaks the page channel
 * (server/protocol/page-channel.ts) with the extension's ISOLATED-world bridge:
 *
 *   - registers globalThis[ADAPTER_REGISTRY_KEY][plugin] = AdapterHandle, disposing the previous
 *     handle first (hot reload re-injects the adapter into live tabs), then announces `registered`;
 *   - on BRIDGE_TO_PAGE_EVENT `call`: validates input with the tool's valibot schema, runs the
 *     handler with ctx (signal, config, reportProgress, log), validates the output, answers `result`;
 *   - on `cancel`: aborts that call's ctx.signal.
 *
 * Every call gets exactly one `result`: a value that cannot be sent as JSON (a cycle, a BigInt) or
 * is over the result size limit becomes an error naming the tool, and disposing the adapter
 * (rebuilt, updated, turned off, removed) answers the calls still running at once, whether or not
 * their handlers honour the signal. A plugin module that throws while loading registers a handle that answers every call
 * with that error (startFailedAdapter), so the agent learns why instead of "not ready".
 *
 * No eval / new Function anywhere (valibot does not need them), so strict-CSP pages work.
 */
import {
  ADAPTER_HASH_PLACEHOLDER,
  ADAPTER_REGISTRY_KEY,
  adapterLoadFailedMessage,
  BRIDGE_TO_PAGE_EVENT,
  PAGE_TO_BRIDGE_EVENT,
  type AdapterHandle,
  type BridgeToPage,
  type PageToBridge,
} from '../../server/protocol/page-channel.ts';
import type { LogLevel } from '../../server/protocol/methods.ts';
import { isPluginDefinition, type PluginDefinition, type ToolDefinition } from './define.ts';
import { executeTool, sendableResult, thrownText, type ErrorPayload, type ExecuteOutcome } from './execute.ts';
import { SDK_VERSION } from './version.ts';
import { jsonText } from './json-text.ts';

/** JSON-safe copy of log data (functions, cycles and DOM nodes must not break the channel). */
function jsonSafe(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    const seen = new WeakSet<object>();
    return JSON.parse(
      jsonText(data, (_k, val) => {
        if (typeof val === 'bigint') return val.toString();
        if (typeof val === 'function') return `[function ${val.name || 'anonymous'}]`;
        if (val instanceof Error) return { name: val.name, message: val.message };
        if (typeof Node !== 'undefined' && val instanceof Node) return `[${val.nodeName}]`;
        if (typeof val === 'object' && val !== null) {
          if (seen.has(val)) return '[circular]';
          seen.add(val);
        }
        return val;
      }) as string,
    );
  } catch {
    return String(data);
  }
}

export interface StartedAdapter {
  handle: AdapterHandle;
}

/** One line of an exception's message (Chrome's cycle message spans several). */
function errorText(err: unknown): string {
  return thrownText(err, false).replace(/\s+/g, ' ').trim();
}

/** The `result` message of a call; an error result (naming the tool) for a value the channel cannot carry. */
export function resultDetail(id: string, plugin: string, fullName: string, outcome: ExecuteOutcome): string {
  if (!outcome.ok) return jsonText({ type: 'result', id, plugin, ok: false, error: outcome.error } satisfies PageToBridge)!;
  const sendable = sendableResult(fullName, outcome.value);
  if (!sendable.ok) return jsonText({ type: 'result', id, plugin, ok: false, error: sendable.error } satisfies PageToBridge)!;
  // The value's JSON is spliced in as is: stringified once, however large.
  return `{"type":"result","id":${JSON.stringify(id)},"plugin":${JSON.stringify(plugin)},"ok":true,"value":${sendable.json}}`;
}

/**
 * How long isReady() may take. One that never settles (a promise waiting for something that does
 * not happen) counts as not ready after this, so calls fail saying so instead of at the call's timeout.
 */
export const IS_READY_TIMEOUT_MS = 5000;

type ReadyVerdict = { ready: true } | { ready: false; why?: string; stuck?: true };

const isThenable = (x: unknown): x is PromiseLike<unknown> => (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';

/** The page's origin, for messages the user acts on. */
function pageSite(): string {
  const origin = (globalThis as { location?: { origin?: string } }).location?.origin;
  return origin && origin !== 'null' ? origin : 'this page';
}

export function startAdapter(
  plugin: PluginDefinition,
  hash: string = ADAPTER_HASH_PLACEHOLDER,
  loadError?: string,
  o: { readyTimeoutMs?: number } = {},
): StartedAdapter {
  const name = plugin.name;
  const readyTimeoutMs = o.readyTimeoutMs ?? IS_READY_TIMEOUT_MS;
  const tools = new Map<string, ToolDefinition>(plugin.tools.map((t) => [t.name, t]));
  /** Calls not answered yet: answer() removes them, so each call gets exactly one result. */
  const inFlight = new Map<string, { controller: AbortController; tool: string }>();

  const emit = (detail: string) => document.dispatchEvent(new CustomEvent(PAGE_TO_BRIDGE_EVENT, { detail }));
  const send = (msg: PageToBridge) => emit(jsonText(msg)!);

  const log = (level: LogLevel, id: string | undefined, message: string, data?: unknown) => {
    const safe = jsonSafe(data);
    send({ type: 'log', plugin: name, ...(id ? { id } : {}), level, message: String(message), ...(safe !== undefined ? { data: safe } : {}), ts: Date.now() });
  };

  const answer = (id: string, outcome: ExecuteOutcome) => {
    const call = inFlight.get(id);
    if (!call) return;
    inFlight.delete(id);
    emit(resultDetail(id, name, `${name}_${call.tool}`, outcome));
  };

  async function runCall(msg: Extract<BridgeToPage, { type: 'call' }>): Promise<void> {
    if (loadError !== undefined) {
      const error: ErrorPayload = {
        message: adapterLoadFailedMessage(name, msg.tool, loadError),
        code: 'adapter_load_failed',
        category: 'internal',
        retryable: false,
      };
      send({ type: 'result', id: msg.id, plugin: name, ok: false, error });
      return;
    }
    const tool = tools.get(msg.tool);
    if (!tool) {
      const error: ErrorPayload = { message: `Plugin ${name} has no tool "${msg.tool}" (known: ${[...tools.keys()].join(', ')})`, code: 'unknown_tool', category: 'not_found', retryable: false };
      send({ type: 'result', id: msg.id, plugin: name, ok: false, error });
      return;
    }
    const controller = new AbortController();
    inFlight.set(msg.id, { controller, tool: tool.name });
    const fail = (error: ErrorPayload) => answer(msg.id, { ok: false, error });
    try {
      // Re-checked on every call: a tab that logged out or navigated away since the extension last
      // looked must not run the tool against a page that is no longer usable.
      const verdict = await checkReady();
      if (!verdict.ready) {
        fail({
          message: verdict.why
            ? `${name}_${tool.name} did not run: ${name}'s isReady() ${verdict.why}`
            : `${name} is not ready in this tab (${pageSite()}): its isReady() check is false now, so the user is probably logged out; ask the user to log in to ${plugin.displayName || name} in their browser (or wait for the page to finish loading), then call again`,
          code: 'adapter_not_ready',
          category: 'auth',
          retryable: !verdict.stuck,
        });
        return;
      }
      const outcome = await executeTool(name, tool, msg.input ?? {}, {
        signal: controller.signal,
        config: msg.config ?? {},
        configSchema: plugin.configSchema,
        callId: msg.id,
        onProgress: (p) => {
          if (!inFlight.has(msg.id)) return;
          send({
            type: 'progress',
            id: msg.id,
            plugin: name,
            progress: p.progress,
            ...(p.total !== undefined ? { total: p.total } : {}),
            ...(p.message !== undefined ? { message: p.message } : {}),
          });
        },
        onLog: (level, message, data) => log(level, msg.id, message, data),
      });
      answer(msg.id, outcome);
    } catch (err) {
      fail({ message: `${name}_${tool.name} failed: ${errorText(err)}`, code: 'internal', category: 'internal', retryable: false });
    }
  }

  const onEvent = (event: Event) => {
    const detail = (event as CustomEvent).detail;
    if (typeof detail !== 'string') return;
    let msg: BridgeToPage;
    try {
      msg = JSON.parse(detail) as BridgeToPage;
    } catch {
      return;
    }
    if (!msg || msg.plugin !== name) return;
    if (msg.type === 'call') void runCall(msg);
    else if (msg.type === 'cancel') inFlight.get(msg.id)?.controller.abort(new Error(msg.reason || 'cancelled'));
  };

  const registry = ((globalThis as Record<string, unknown>)[ADAPTER_REGISTRY_KEY] ??= {}) as Record<string, AdapterHandle>;
  const previous = registry[name];
  if (previous) {
    try {
      previous.dispose();
    } catch {
      // an old adapter failing to dispose must not stop the new one
    }
  }

  let disposed = false;
  let lastReadyError: string | undefined;
  /** Said once per message in the page's console, where the author looks. */
  const warnOnce = (text: string) => {
    if (text === lastReadyError) return;
    lastReadyError = text;
    console.warn(`[OpenTabs] ${name}: ${text}`);
  };
  /** A verdict of isReady(), also kept as the handle's reason for the extension's own not-ready answer. */
  const settle = (verdict: ReadyVerdict): ReadyVerdict => {
    // Why the last check said not ready, for the extension's own not-ready answer (it asks
    // isReady() before it sends a call, and otherwise can only guess "signed out or loading").
    if (!verdict.ready && verdict.why) handle.notReadyReason = `${name}'s isReady() ${verdict.why}`;
    else delete handle.notReadyReason;
    return verdict;
  };
  const threw = (err: unknown): ReadyVerdict => {
    const text = errorText(err);
    warnOnce(`isReady() threw (${text}); the tab counts as not ready. Return false instead of throwing while the page is not usable.`);
    return { ready: false, why: `threw: ${text}. Retry once the page has loaded; isReady should return false instead of throwing while the page is not usable` };
  };
  /**
   * isReady() bounded by readyTimeoutMs; a throw or a timeout counts as not ready, with why. An
   * isReady that answers at once (no promise: the usual check of the page's state) is taken as
   * it is, with no timer: only a promise can fail to settle.
   */
  const checkReady = (): ReadyVerdict | Promise<ReadyVerdict> => {
    if (disposed) return { ready: false };
    let answer: unknown;
    let pending: boolean;
    try {
      answer = plugin.isReady();
      // Inside the try: reading `then` of what it returned may throw too (a getter), as an await would.
      pending = isThenable(answer);
    } catch (err) {
      return settle(threw(err));
    }
    if (!pending) return settle(answer === true ? { ready: true } : { ready: false });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<ReadyVerdict>((res) => {
      timer = setTimeout(() => {
        const why = `did not settle within ${readyTimeoutMs / 1000} s. isReady must return true or false promptly (check the page's current state rather than wait for something that may never happen)`;
        warnOnce(`isReady() ${why}; the tab counts as not ready.`);
        res({ ready: false, why: `${why}; retrying will not help until the plugin is fixed and rebuilt`, stuck: true });
      }, readyTimeoutMs);
    });
    const checked = Promise.resolve(answer).then(
      (r): ReadyVerdict => (r === true ? { ready: true } : { ready: false }),
      threw,
    );
    return Promise.race([checked, late]).then(settle, (err: unknown) => settle(threw(err))).finally(() => clearTimeout(timer));
  };
  const handle: AdapterHandle & { notReadyReason?: string } = {
    plugin: name,
    hash,
    sdkVersion: SDK_VERSION,
    ...(loadError !== undefined ? { loadError } : {}),
    async isReady() {
      return (await checkReady()).ready;
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      document.removeEventListener(BRIDGE_TO_PAGE_EVENT, onEvent);
      const why = `the ${name} adapter was unloaded from this page (the plugin was rebuilt, updated, turned off or removed)`;
      // Answered now, not when (or if) the handler notices its aborted signal.
      for (const [id, call] of [...inFlight]) {
        call.controller.abort(new Error(why));
        answer(id, { ok: false, error: { message: `${name}_${call.tool} was stopped: ${why}; call it again once the plugin is loaded`, code: 'adapter_unloaded', category: 'internal', retryable: true } });
      }
      if (registry[name] === handle) delete registry[name];
    },
  };
  registry[name] = handle;
  document.addEventListener(BRIDGE_TO_PAGE_EVENT, onEvent);
  send({ type: 'registered', plugin: name, hash });
  return { handle };
}

/** Entry used by the build: find the plugin among a module's exports (default or named). */
export function startAdapterFromModule(mod: Record<string, unknown>): StartedAdapter {
  const plugin = isPluginDefinition(mod.default) ? mod.default : Object.values(mod).find(isPluginDefinition);
  if (!plugin) throw new Error('OpenTabs adapter: the plugin module exports no definePlugin(...) result');
  return startAdapter(plugin);
}

/**
 * The plugin module threw while loading in this page (the build imports it after the runtime and
 * calls this on failure): register a handle that is ready and answers every call with the error,
 * so the agent and the author see why, and log it to the page's console.
 */
export function startFailedAdapter(name: string, err: unknown, hash: string = ADAPTER_HASH_PLACEHOLDER): StartedAdapter {
  const text = errorText(err);
  console.error(`[OpenTabs] the ${name} adapter failed to load: ${text}`, err);
  const stub = { name, displayName: name, description: '', urlPatterns: [], isReady: () => true, tools: [] } as PluginDefinition;
  return startAdapter(stub, hash, text || 'it threw');
}
