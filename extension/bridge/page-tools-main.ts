/**
 * Page tools (WebMCP), MAIN world, registered at document_start on http(s) pages: sees every tool
 * the page registers, whichever API it uses — navigator.modelContext or document.modelContext,
 * native, the @mcp-b/global polyfill, or a hand-written object — and whenever it was registered:
 *
 * - the context object (wherever it appears) gets its registerTool / unregisterTool /
 *   provideContext / clearContext wrapped; registerTool's `signal` option unregisters on abort;
 * - a context defined later is caught where it is defined: Object.defineProperty /
 *   Reflect.defineProperty of `modelContext` (how polyfills install it), and plain assignment
 *   `navigator.modelContext = …` (a `set` trap behind Navigator.prototype, only when the browser
 *   has no modelContext of its own; feature detection sees nothing);
 * - tools registered before this script ran (it is also injected into tabs already open) are read
 *   with getTools()/executeTool() or navigator.modelContextTesting when the page has them.
 *
 * The current list goes to the ISOLATED bridge (page-tools-bridge.ts) as one message per change
 * (changes in one task are batched); calls come back and run the tool's own execute(input, client)
 * with `client.signal` aborted when the agent cancels. The page can read and forge everything on
 * this channel: it only ever speaks for its own tools (see server/protocol/page-tools.ts).
 */
import { BRIDGE_TO_PAGE_TOOLS_EVENT, PAGE_TOOLS_TO_BRIDGE_EVENT, type BridgeToPageTools } from '../../server/protocol/page-tools.ts';

type Execute = (input: Record<string, unknown>, client: unknown) => unknown;
interface Entry {
  name: string;
  description: unknown;
  inputSchema: unknown;
  execute: Execute;
  /** annotations.destructiveHint was true: its approval card's Always allow asks once more. */
  destructive: boolean;
}
type Ctx = Record<string, unknown>;

/** Asks a copy of this script already in the document to send its list again (see below). */
const PROBE = 'probe';

(() => {
  // Captured before any page script can replace them.
  const origDefine = Object.defineProperty;
  const reflectDefine = Reflect.defineProperty;
  const getOwn = Object.getOwnPropertyDescriptor;
  const fnToString = Function.prototype.toString;
  const bind = Function.prototype.bind;
  const apply = Reflect.apply;
  const dispatchEvent = EventTarget.prototype.dispatchEvent;
  const addEventListener = EventTarget.prototype.addEventListener;
  const CustomEv = CustomEvent;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const warn = console.warn.bind(console);
  const doc = document;

  // This script is injected again into tabs already open (when the extension is installed or
  // updated): a copy already watching this document answers a probe at once (events run
  // synchronously) by cancelling it, and sends its list again. No global marks the copy, since a
  // page could read one and know OpenTabs is installed. Copies of earlier versions marked
  // themselves with a global instead, and are looked for there.
  const legacy = (window as unknown as Record<string, { resend?: () => void } | undefined>)['__opentabs_page_tools__'];
  if (legacy && typeof legacy.resend === 'function') return legacy.resend();
  if (!dispatchEvent.call(doc, new CustomEv(BRIDGE_TO_PAGE_TOOLS_EVENT, { detail: stringify({ type: PROBE }), cancelable: true }))) return;

  const tools = new Map<string, Entry>();
  const patched = new WeakSet<object>();
  const running = new Map<string, AbortController>();
  /** Calls whose tool waits in requestUserInteraction for the user's answer (from the side panel). */
  const waiting = new Map<string, (answer: { ok: boolean; message?: string }) => void>();
  /** >0 while a wrapped registerTool runs: a context that forwards to an inner one is counted once. */
  let depth = 0;
  let queued = false;

  function post(msg: unknown): void {
    let detail: string;
    try {
      detail = stringify(msg);
    } catch {
      const m = msg as { id?: string };
      detail = stringify({ type: 'result', id: m.id, ok: false, error: { code: 'invalid_page_result', message: "The page tool's result is not JSON (a cycle, a BigInt …)" } });
    }
    dispatchEvent.call(doc, new CustomEv(PAGE_TOOLS_TO_BRIDGE_EVENT, { detail }));
  }

  function send(): void {
    const list: unknown[] = [];
    for (const t of tools.values()) list.push({ name: t.name, description: t.description, inputSchema: t.inputSchema, ...(t.destructive ? { destructive: true } : {}) });
    post({ type: 'tools', tools: list });
  }

  function changed(): void {
    if (queued) return;
    queued = true;
    queueMicrotask(() => {
      queued = false;
      send();
    });
  }

  /** annotations.destructiveHint === true, read once (a getter of the page may throw). */
  function markedDestructive(t: Record<string, unknown>): boolean {
    try {
      const a = t.annotations;
      return typeof a === 'object' && a !== null && (a as Record<string, unknown>).destructiveHint === true;
    } catch {
      return false;
    }
  }

  function record(tool: unknown, signal: unknown): void {
    if (!tool || typeof tool !== 'object') return;
    const t = tool as Record<string, unknown>;
    if (typeof t.name !== 'string' || typeof t.execute !== 'function') return;
    const name = t.name;
    const entry: Entry = { name, description: t.description, inputSchema: t.inputSchema, execute: t.execute as Execute, destructive: markedDestructive(t) };
    tools.set(name, entry);
    changed();
    if (signal && typeof (signal as AbortSignal).addEventListener === 'function') {
      const s = signal as AbortSignal;
      const drop = () => {
        if (tools.get(name) === entry) {
          tools.delete(name);
          changed();
        }
      };
      if (s.aborted) drop();
      else s.addEventListener('abort', drop, { once: true });
    }
  }

  function wrap(ctx: Ctx, method: string, make: (orig: (...a: unknown[]) => unknown) => (...a: unknown[]) => unknown): void {
    const orig = ctx[method];
    if (typeof orig !== 'function') return;
    const fn = make(orig as (...a: unknown[]) => unknown);
    try {
      origDefine(ctx, method, { configurable: true, enumerable: false, writable: true, value: fn });
    } catch {
      try {
        ctx[method] = fn;
      } catch {}
    }
  }

  const afterSuccess = (ret: unknown, then: () => void) => {
    if (ret && typeof (ret as Promise<unknown>).then === 'function') (ret as Promise<unknown>).then(then, () => {});
    else then();
  };

  function patch(ctx: unknown): void {
    if (!ctx || (typeof ctx !== 'object' && typeof ctx !== 'function') || patched.has(ctx as object)) return;
    patched.add(ctx as object);
    const c = ctx as Ctx;
    wrap(c, 'registerTool', (orig) =>
      function (this: unknown, ...args: unknown[]) {
        const outer = depth === 0;
        depth++;
        let ret: unknown;
        try {
          ret = orig.apply(this, args);
        } finally {
          depth--;
        }
        // Recorded once it succeeded: a duplicate or invalid registration the page's API refuses is not listed.
        if (outer) afterSuccess(ret, () => record(args[0], (args[1] as { signal?: unknown } | undefined)?.signal));
        return ret;
      },
    );
    wrap(c, 'unregisterTool', (orig) =>
      function (this: unknown, ...args: unknown[]) {
        const ret = orig.apply(this, args);
        const name = typeof args[0] === 'string' ? args[0] : (args[0] as { name?: unknown } | undefined)?.name;
        afterSuccess(ret, () => {
          if (typeof name === 'string' && tools.delete(name)) changed();
        });
        return ret;
      },
    );
    wrap(c, 'provideContext', (orig) =>
      function (this: unknown, ...args: unknown[]) {
        const ret = orig.apply(this, args);
        afterSuccess(ret, () => {
          tools.clear();
          const list = (args[0] as { tools?: unknown } | undefined)?.tools;
          if (Array.isArray(list)) for (const t of list) record(t, undefined);
          changed();
        });
        return ret;
      },
    );
    wrap(c, 'clearContext', (orig) =>
      function (this: unknown, ...args: unknown[]) {
        const ret = orig.apply(this, args);
        afterSuccess(ret, () => {
          tools.clear();
          changed();
        });
        return ret;
      },
    );
    void readExisting(c);
  }

  /** Tools registered before we looked: getTools()/executeTool() (the WebMCP draft) or modelContextTesting. */
  async function readExisting(ctx: Ctx): Promise<void> {
    try {
      if (typeof ctx.getTools === 'function' && typeof ctx.executeTool === 'function') {
        const list = (await (ctx.getTools as () => Promise<unknown>).call(ctx)) as Record<string, unknown>[];
        if (!Array.isArray(list)) return;
        for (const d of list) {
          if (typeof d?.name !== 'string' || tools.has(d.name)) continue;
          const execute: Execute = async (input) => {
            const json = await (ctx.executeTool as (t: unknown, j: string) => Promise<string | null>).call(ctx, d, stringify(input));
            return json === null || json === undefined ? null : parse(json);
          };
          tools.set(d.name, { name: d.name, description: d.description, inputSchema: d.inputSchema, execute, destructive: markedDestructive(d) });
          changed();
        }
        return;
      }
      const testing = (navigator as unknown as Record<string, Ctx | undefined>).modelContextTesting;
      if (testing && typeof testing.listTools === 'function' && typeof testing.executeTool === 'function') {
        const list = (await (testing.listTools as () => unknown).call(testing)) as Record<string, unknown>[];
        if (!Array.isArray(list)) return;
        for (const d of list) {
          if (typeof d?.name !== 'string' || tools.has(d.name)) continue;
          const name = d.name;
          const execute: Execute = async (input) => {
            const json = await (testing.executeTool as (n: string, j: string) => Promise<string | null>).call(testing, name, stringify(input));
            return json === null || json === undefined ? null : parse(json);
          };
          tools.set(name, { name, description: d.description, inputSchema: d.inputSchema, execute, destructive: markedDestructive(d) });
          changed();
        }
      }
    } catch {}
  }

  /** The page's context objects now (document first; navigator's own value without running a getter twice). */
  function lookAround(): void {
    try {
      patch((doc as unknown as Ctx).modelContext);
    } catch {}
    try {
      const own = getOwn(navigator, 'modelContext');
      if (own && 'value' in own) patch(own.value);
      else if (!(doc as unknown as Ctx).modelContext) patch((navigator as unknown as Ctx).modelContext);
    } catch {}
  }

  // A function of ours put in place of a browser's own reads as that one: Function.prototype.toString
  // gives the browser's text for it (in this page; another frame's toString sees a bound function,
  // also "[native code]"), and it has the same name and length and no `prototype`. Otherwise any
  // page could tell OpenTabs is installed from `Object.defineProperty.toString()`.
  const nativeText = new WeakMap<object, string>();
  function like<F extends (...a: never[]) => unknown>(fn: F, native: (...a: never[]) => unknown): F {
    const bound = apply(bind, fn, [undefined]) as F;
    origDefine(bound, 'name', { value: native.name });
    origDefine(bound, 'length', { value: native.length });
    nativeText.set(bound, apply(fnToString, native, []) as string);
    return bound;
  }
  const toString = new Proxy(fnToString, {
    apply(target, self, args) {
      const text = nativeText.get(self as object);
      return text !== undefined ? text : apply(target, self, args);
    },
  });
  nativeText.set(toString, apply(fnToString, fnToString, []) as string);

  // Polyfills install modelContext with defineProperty: look right after such a definition. Every
  // other call (frameworks make millions) costs one comparison of the key.
  const watchedObject = like(<T>(o: T, p: PropertyKey, a: PropertyDescriptor): T => {
    if (p !== 'modelContext') return origDefine(o, p, a);
    const r = origDefine(o, p, a);
    lookAround();
    return r;
  }, origDefine);
  const watchedReflect = like((o: object, p: PropertyKey, a: PropertyDescriptor): boolean => {
    if (p !== 'modelContext') return reflectDefine(o, p, a);
    const r = reflectDefine(o, p, a);
    lookAround();
    return r;
  }, reflectDefine);
  Function.prototype.toString = toString;
  Object.defineProperty = watchedObject as typeof Object.defineProperty;
  Reflect.defineProperty = watchedReflect;

  // A hand-written shim assigns `navigator.modelContext = {…}`. The assignment is caught by a
  // Proxy put between Navigator.prototype and its parent: its `set` trap sees an assignment that
  // would create the property, creates it exactly as the assignment would, and looks at the value.
  // It has no `has` or `get` trap of its own, so `'modelContext' in navigator` and
  // `navigator.modelContext` stay false / undefined until the page sets it (feature detection
  // is unchanged). Only when the browser has no modelContext of its own.
  if (!('modelContext' in navigator)) {
    try {
      const parent = Object.getPrototypeOf(Navigator.prototype) as object;
      const trap = new Proxy(parent, {
        set(target, key, value, receiver) {
          if (key === 'modelContext' && receiver === navigator) {
            origDefine(receiver, key, { value, writable: true, configurable: true, enumerable: true });
            patch(value);
            return true;
          }
          return Reflect.set(target, key, value, receiver);
        },
      });
      Object.setPrototypeOf(Navigator.prototype, trap);
    } catch {}
  }

  addEventListener.call(doc, BRIDGE_TO_PAGE_TOOLS_EVENT, (ev: Event) => {
    const detail = (ev as CustomEvent).detail;
    if (typeof detail !== 'string') return;
    let msg: BridgeToPageTools;
    try {
      msg = parse(detail) as BridgeToPageTools;
    } catch {
      return;
    }
    if ((msg as { type?: unknown } | null)?.type === PROBE) {
      ev.preventDefault();
      lookAround();
      if (tools.size > 0) send();
      return;
    }
    switch (msg?.type) {
      case 'hello':
        if (tools.size > 0) send();
        return;
      case 'warn':
        if (typeof msg.message === 'string') warn(`[OpenTabs] ${msg.message}`);
        return;
      case 'cancel': {
        const ac = running.get(msg.id);
        if (ac) {
          running.delete(msg.id);
          ac.abort(new DOMException(typeof msg.reason === 'string' ? msg.reason : 'cancelled', 'AbortError'));
        }
        return;
      }
      case 'call':
        return void run(msg.id, msg.name, msg.input);
      case 'interaction': {
        const answer = waiting.get(msg.id);
        if (answer) {
          waiting.delete(msg.id);
          answer({ ok: msg.ok === true, ...(typeof msg.message === 'string' ? { message: msg.message } : {}) });
        }
        return;
      }
    }
  });

  async function run(id: string, name: string, input: Record<string, unknown>): Promise<void> {
    if (typeof id !== 'string' || running.has(id)) return;
    const entry = tools.get(name);
    if (!entry) return post({ type: 'result', id, ok: false, error: { code: 'unknown_tool', message: `The page has no tool "${name}" (any more)` } });
    const ac = new AbortController();
    running.set(id, ac);
    const client = {
      signal: ac.signal,
      // The page wants the user for something during the call (its own confirmation, a sign-in):
      // the side panel asks them, and only once they chose Continue (their tab then in front) does
      // the callback run; Decline or no answer rejects, and the call fails.
      requestUserInteraction: async (cb: () => unknown) => {
        if (typeof cb !== 'function') throw new TypeError('requestUserInteraction takes a function, run once the user is there');
        if (running.get(id) !== ac || ac.signal.aborted) throw new DOMException('The call is over', 'AbortError');
        if (waiting.has(id)) throw new DOMException('The user is being asked already for this call', 'InvalidStateError');
        const answer = await new Promise<{ ok: boolean; message?: string }>((resolve) => {
          waiting.set(id, resolve);
          ac.signal.addEventListener('abort', () => resolve({ ok: false, message: 'The call is over' }), { once: true });
          post({ type: 'interaction', id });
        });
        waiting.delete(id);
        if (!answer.ok) throw new DOMException(answer.message ?? 'The user did not go on', 'NotAllowedError');
        return cb();
      },
    };
    try {
      const value = await entry.execute.call(undefined, input, client);
      if (running.get(id) !== ac) return;
      post({ type: 'result', id, ok: true, value });
    } catch (err) {
      if (running.get(id) !== ac) return;
      const message = err instanceof Error ? `${err.name}: ${err.message}` : typeof err === 'string' ? err : 'The page tool threw';
      post({ type: 'result', id, ok: false, error: { code: 'tool_error', message } });
    } finally {
      if (running.get(id) === ac) running.delete(id);
    }
  }

  lookAround();
})();
