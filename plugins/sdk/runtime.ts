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
 * No eval / new Function anywhere (valibot does not need them), so strict-CSP pages work.
 */
import {
  ADAPTER_HASH_PLACEHOLDER,
  ADAPTER_REGISTRY_KEY,
  BRIDGE_TO_PAGE_EVENT,
  PAGE_TO_BRIDGE_EVENT,
  type AdapterHandle,
  type BridgeToPage,
  type PageToBridge,
} from '../../server/protocol/page-channel.ts';
import type { LogLevel } from '../../server/protocol/methods.ts';
import { isPluginDefinition, type PluginDefinition, type ToolDefinition } from './define.ts';
import { executeTool, type ErrorPayload } from './execute.ts';
import { SDK_VERSION } from './version.ts';

/** JSON-safe copy of log data (functions, cycles and DOM nodes must not break the channel). */
function jsonSafe(data: unknown): unknown {
  if (data === undefined) return undefined;
  try {
    const seen = new WeakSet<object>();
    return JSON.parse(
      JSON.stringify(data, (_k, val) => {
        if (typeof val === 'bigint') return val.toString();
        if (typeof val === 'function') return `[function ${val.name || 'anonymous'}]`;
        if (val instanceof Error) return { name: val.name, message: val.message };
        if (typeof Node !== 'undefined' && val instanceof Node) return `[${val.nodeName}]`;
        if (typeof val === 'object' && val !== null) {
          if (seen.has(val)) return '[circular]';
          seen.add(val);
        }
        return val;
      }),
    );
  } catch {
    return String(data);
  }
}

export interface StartedAdapter {
  handle: AdapterHandle;
}

export function startAdapter(plugin: PluginDefinition, hash: string = ADAPTER_HASH_PLACEHOLDER): StartedAdapter {
  const name = plugin.name;
  const tools = new Map<string, ToolDefinition>(plugin.tools.map((t) => [t.name, t]));
  const inFlight = new Map<string, AbortController>();

  const send = (msg: PageToBridge) => {
    document.dispatchEvent(new CustomEvent(PAGE_TO_BRIDGE_EVENT, { detail: JSON.stringify(msg) }));
  };

  const log = (level: LogLevel, id: string | undefined, message: string, data?: unknown) => {
    const safe = jsonSafe(data);
    send({ type: 'log', plugin: name, ...(id ? { id } : {}), level, message: String(message), ...(safe !== undefined ? { data: safe } : {}), ts: Date.now() });
  };

  async function runCall(msg: Extract<BridgeToPage, { type: 'call' }>): Promise<void> {
    const tool = tools.get(msg.tool);
    const fail = (error: ErrorPayload) => send({ type: 'result', id: msg.id, plugin: name, ok: false, error });
    if (!tool) {
      fail({ message: `Plugin ${name} has no tool "${msg.tool}" (known: ${[...tools.keys()].join(', ')})`, code: 'unknown_tool', category: 'not_found', retryable: false });
      return;
    }
    const controller = new AbortController();
    inFlight.set(msg.id, controller);
    try {
      // Re-checked on every call: a tab that logged out or navigated away since the extension last
      // looked must not run the tool against a page that is no longer usable.
      if (!(await handle.isReady())) {
        fail({
          message: `${name} is not ready in this tab (its isReady() check is false now): log in to the app or wait for the page to finish loading, then retry`,
          code: 'adapter_not_ready',
          category: 'auth',
          retryable: true,
        });
        return;
      }
      const outcome = await executeTool(name, tool, msg.input ?? {}, {
        signal: controller.signal,
        config: msg.config ?? {},
        callId: msg.id,
        onProgress: (p) =>
          send({
            type: 'progress',
            id: msg.id,
            plugin: name,
            progress: p.progress,
            ...(p.total !== undefined ? { total: p.total } : {}),
            ...(p.message !== undefined ? { message: p.message } : {}),
          }),
        onLog: (level, message, data) => log(level, msg.id, message, data),
      });
      if (outcome.ok) send({ type: 'result', id: msg.id, plugin: name, ok: true, value: outcome.value });
      else fail(outcome.error);
    } finally {
      inFlight.delete(msg.id);
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
    else if (msg.type === 'cancel') inFlight.get(msg.id)?.abort(new Error(msg.reason || 'cancelled'));
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
  const handle: AdapterHandle = {
    plugin: name,
    hash,
    sdkVersion: SDK_VERSION,
    async isReady() {
      if (disposed) return false;
      try {
        return (await plugin.isReady()) === true;
      } catch {
        return false;
      }
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      document.removeEventListener(BRIDGE_TO_PAGE_EVENT, onEvent);
      for (const c of inFlight.values()) c.abort(new Error('adapter replaced by a newer version'));
      inFlight.clear();
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
