/**
 * Running one tool call: validate input (valibot), run the handler with its ctx, validate the
 * output, and turn any failure into the page-channel error shape. Shared by the in-page runtime
 * and by `runTool` (plugin unit tests), so tests exercise exactly what the page runs.
 */
import * as v from 'valibot';
import { utf8Bytes, type PageToBridge } from '../../server/protocol/page-channel.ts';
import { PLUGIN_RESULT_MAX_BYTES } from '../../server/protocol/limits.ts';
import type { LogLevel } from '../../server/protocol/methods.ts';
import type { ConfigField, ConfigSchema, ToolContext, ToolDefinition } from './define.ts';
import { isToolError } from './errors.ts';
import { jsonText } from './json-text.ts';

export type ErrorPayload = Extract<PageToBridge, { ok: false }>['error'];

export interface ExecuteOptions {
  signal: AbortSignal;
  config: Record<string, unknown>;
  callId: string;
  onProgress(p: { progress: number; total?: number; message?: string }): void;
  onLog(level: LogLevel, message: string, data?: unknown): void;
  /** The plugin's settings schema: a required setting with no value fails the call before its handler runs. */
  configSchema?: ConfigSchema;
}

export type ExecuteOutcome = { ok: true; value: unknown } | { ok: false; error: ErrorPayload };

/** "a.b.0.c: message" for the first valibot issue. */
export function issueText(issues: readonly v.BaseIssue<unknown>[]): string {
  const issue = issues[0];
  if (!issue) return 'invalid';
  const path = v.getDotPath(issue) ?? '';
  return `${path ? `${path}: ` : ''}${issue.message}`;
}

export function toErrorPayload(err: unknown, what: string): ErrorPayload {
  if (isToolError(err)) {
    return {
      message: err.message,
      code: err.code,
      category: err.category,
      retryable: err.retryable,
      ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
    };
  }
  return { message: `${what} failed: ${thrownText(err)}`, code: 'internal', category: 'internal', retryable: false };
}

const THROWN_TEXT_MAX = 500;
const NOT_AN_ERROR = 'throw an Error or a ToolError with a message instead';

/**
 * What a thrown value says. An Error (or anything with a non-empty string `message`, such as an
 * error of another frame or an API's error body) gives its message; a fetch Response its status
 * and URL; any other value is shown as JSON (cut at 500 characters) with what was thrown, so
 * `throw {code: 'E'}` does not reach the agent as "[object Object]" nor `throw undefined` as "undefined".
 * `advice: false` leaves out what to throw instead (for isReady, which should return false).
 */
export function thrownText(err: unknown, advice = true): string {
  try {
    return describeThrown(err, advice);
  } catch {
    // A getter or toString that throws itself.
    return `a value that cannot be read was thrown${advice ? ` (${NOT_AN_ERROR})` : ''}`;
  }
}

function describeThrown(err: unknown, advice: boolean): string {
  const not = advice ? ` (${NOT_AN_ERROR})` : '';
  if (typeof err === 'string') return err || `an empty string was thrown${not}`;
  if (typeof Response !== 'undefined' && err instanceof Response) {
    return `a fetch Response was thrown: HTTP ${err.status}${err.statusText ? ` ${err.statusText}` : ''}${err.url ? ` from ${err.url}` : ''} (the SDK's fetchJson/request turn HTTP failures into ToolErrors)`;
  }
  if (typeof err === 'object' && err !== null) {
    const message = (err as { message?: unknown }).message;
    if (typeof message === 'string' && message.trim()) return message;
    if (err instanceof Error) return `${err.name || 'Error'} with no message`;
    let json: string | undefined;
    try {
      json = JSON.stringify(err);
    } catch {
      json = undefined;
    }
    const shown = json && json !== '{}' ? (json.length > THROWN_TEXT_MAX ? `${json.slice(0, THROWN_TEXT_MAX)}…` : json) : Object.prototype.toString.call(err);
    return `${shown} was thrown, not an Error${not}`;
  }
  return `${String(err)} was thrown, not an Error${not}`;
}

/** A value in a result that JSON cannot carry: what it is and what to return instead. */
interface Unsendable {
  what: string;
  /** What JSON.stringify would make of it, when it does not throw. */
  becomes?: string;
  fix: string;
}

const isThenableValue = (x: object): boolean => {
  try {
    return typeof (x as { then?: unknown }).then === 'function';
  } catch {
    return false;
  }
};

/**
 * Values JSON.stringify sends as `{}` (a Map, a Set, a Promise, an Error, a DOM node …), as an
 * object of numbered keys (a Uint8Array) or cannot send at all (a BigInt): the agent would get
 * `{}` where the author meant data, without any error. A Date (toJSON) and plain objects are fine.
 */
function unsendable(val: unknown): Unsendable | null {
  if (typeof val === 'bigint') return { what: 'a BigInt', fix: 'return Number(value) or String(value)' };
  if (typeof val !== 'object' || val === null) return null;
  const g = globalThis as Record<string, unknown>;
  const is = (ctor: string) => typeof g[ctor] === 'function' && val instanceof (g[ctor] as new () => unknown);
  if (is('Map') || is('WeakMap')) return { what: 'a Map', becomes: '{}', fix: 'return Object.fromEntries(map) (string keys) or [...map] (entries)' };
  if (is('Set') || is('WeakSet')) return { what: 'a Set', becomes: '{}', fix: 'return [...set]' };
  if (is('Response')) return { what: 'a fetch Response', becomes: '{}', fix: 'return its parsed body (fetchJson/fetchText read it for you)' };
  if (is('Promise') || isThenableValue(val)) return { what: 'a Promise', becomes: '{}', fix: 'await it (an `await` is missing) before returning' };
  if (is('Error')) return { what: 'an Error', becomes: '{}', fix: 'throw it (a ToolError says what went wrong), or return its message as a string' };
  if (is('Node')) {
    const name = String((val as { nodeName?: unknown }).nodeName ?? 'node').toLowerCase();
    return { what: `a DOM node (<${name}>)`, becomes: '{}', fix: 'return the data it shows (el.textContent, el.getAttribute(…)), not the element' };
  }
  if (is('Blob')) return { what: 'a Blob', becomes: '{}', fix: 'return fetchBase64(url) or { base64: bytesToBase64(new Uint8Array(await blob.arrayBuffer())) }' };
  if (is('ArrayBuffer') || ArrayBuffer.isView(val)) {
    return { what: 'binary data (an ArrayBuffer or typed array)', becomes: '{} or an object of numbered keys', fix: 'return bytesToBase64(bytes) (see "Files and binary data")' };
  }
  return null;
}

const SEARCH_MAX_NODES = 200_000;

/**
 * The first place in `root` (depth first, in JSON's order) holding a value JSON cannot carry, or
 * a reference back to an object that contains it (a cycle); undefined when there is none (or
 * after SEARCH_MAX_NODES objects). Objects with a toJSON (a Date) are taken as they are.
 */
function findUnsendable(root: unknown): { path: string; found?: Unsendable; cycle?: true } | undefined {
  const ancestors = new Set<object>();
  /** Keys from the root to the node being looked at, joined only for the answer. */
  const keys: string[] = [];
  let budget = SEARCH_MAX_NODES;
  const at = (extra?: string) => (extra === undefined ? keys : [...keys, extra]).join('.');
  const walk = (node: unknown): { path: string; found?: Unsendable; cycle?: true } | undefined => {
    if (typeof node !== 'object' || node === null) {
      const bad = typeof node === 'bigint' ? unsendable(node) : null;
      return bad ? { path: at(), found: bad } : undefined;
    }
    if (--budget < 0) return undefined;
    let own: string[];
    try {
      // Plain objects and arrays (nearly every node) skip the checks of what else a value may be.
      const proto = Object.getPrototypeOf(node);
      if (proto !== Object.prototype && proto !== null && !Array.isArray(node)) {
        const bad = unsendable(node);
        if (bad) return { path: at(), found: bad };
        if (typeof (node as { toJSON?: unknown }).toJSON === 'function') return undefined;
      }
      if (ancestors.has(node)) return { path: at(), cycle: true };
      own = Object.keys(node);
    } catch {
      return undefined;
    }
    ancestors.add(node);
    try {
      for (const key of own) {
        let child: unknown;
        try {
          child = (node as Record<string, unknown>)[key];
        } catch {
          continue;
        }
        if (typeof child !== 'object' && typeof child !== 'bigint') continue;
        keys.push(key);
        const hit = walk(child);
        keys.pop();
        if (hit) return hit;
      }
    } finally {
      ancestors.delete(node);
    }
    return undefined;
  };
  return walk(root);
}

/** The words for a value found by findUnsendable. */
function unsendableText(hit: { path: string; found?: Unsendable; cycle?: true }, why: string): string {
  if (hit.cycle) {
    return `${hit.path || 'the result itself'} refers back to an object that contains it (a circular reference${why ? `; ${why}` : ''}); return plain data, copying the fields the agent needs`;
  }
  const f = hit.found!;
  return `${f.what} ${hit.path ? `at ${hit.path}` : 'as the result'}${f.becomes ? ` (JSON would send it as ${f.becomes})` : ''}; ${f.fix}`;
}

/**
 * A result as the page channel sends it: its JSON text, or the error naming the tool when JSON
 * cannot carry it (a cycle, a BigInt, or a Map, Promise or DOM node that would arrive as `{}`:
 * the error names where in the result and what to return instead) or it is over
 * PLUGIN_RESULT_MAX_BYTES (the extension would refuse it without knowing the tool).
 */
export function sendableResult(fullName: string, value: unknown): { ok: true; json: string } | { ok: false; error: ErrorPayload } {
  const failed = (detail: string): { ok: false; error: ErrorPayload } => ({
    ok: false,
    error: { message: `${fullName} returned a value that cannot be sent as JSON: ${detail}`, code: 'unserializable_result', category: 'internal', retryable: false },
  });
  let json: string;
  try {
    json = jsonText(value) ?? 'null';
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
    const hit = findUnsendable(value);
    return failed(hit ? unsendableText(hit, hit.cycle ? why : '') : `${why}; return plain data`);
  }
  // Those values are written as {} (a typed array as {"0":…}): only a text with one is searched,
  // so the usual result costs no second pass.
  if (json.includes('{}') || json.includes('{"0":')) {
    const hit = findUnsendable(value);
    if (hit?.found) return failed(unsendableText(hit, ''));
  }
  const bytes = utf8Bytes(json);
  if (bytes > PLUGIN_RESULT_MAX_BYTES) {
    return {
      ok: false,
      error: {
        message: `${fullName} returned ${bytes} bytes of JSON, over the ${PLUGIN_RESULT_MAX_BYTES}-byte limit for plugin results; return less (a page, a filter, fewer fields)`,
        code: 'result_too_large',
        category: 'validation',
        retryable: false,
      },
    };
  }
  return { ok: true, json };
}

type AnySchema = v.GenericSchema | v.GenericSchemaAsync;

/** A value for `key=…` that runs as typed in a shell: a select's first choice, `true`, else a quoted placeholder. */
function settingExample(field: ConfigField): string {
  const first = field.type === 'select' ? field.options?.[0] : undefined;
  if (first !== undefined) return /^[\w.:/@-]+$/.test(first) ? first : `'${first.replace(/'/g, `'\\''`)}'`;
  if (field.type === 'boolean') return 'true';
  return `'<${field.type === 'url' ? 'https://…' : field.type}>'`;
}

/**
 * The error for a required setting (no default) the user has not set: the handler would read
 * undefined where its type promises a value. Names the setting and how the user sets it.
 */
function missingSetting(plugin: string, full: string, schema: ConfigSchema | undefined, config: Record<string, unknown>): ErrorPayload | null {
  for (const [key, field] of Object.entries(schema ?? {})) {
    if (field.required !== true || field.default !== undefined) continue;
    const value = Object.hasOwn(config, key) ? config[key] : undefined;
    if (value !== undefined && value !== null && value !== '') continue;
    const label = field.label ? ` (${field.label})` : '';
    const choices = field.type === 'select' && field.options?.length ? `, one of ${field.options.join(', ')}` : '';
    return {
      message:
        `${full} did not run: the ${plugin} plugin's setting "${key}"${label} is required and not set${choices}. ` +
        `Ask the user to set it in the OpenTabs side panel (the plugin's settings) or with \`opentabs plugin configure ${plugin} ${key}=${settingExample(field)}\`, then call again.`,
      code: 'setting_required',
      category: 'validation',
      retryable: false,
    };
  }
  return null;
}

/**
 * safeParse for a synchronous schema, safeParseAsync for an asynchronous one (valibot marks
 * each): the same result either way, without a promise per check for the usual sync schema.
 */
function check(schema: AnySchema, value: unknown): v.SafeParseResult<AnySchema> | Promise<v.SafeParseResult<AnySchema>> {
  return schema.async ? v.safeParseAsync(schema, value) : v.safeParse(schema as v.GenericSchema, value);
}

export async function executeTool(plugin: string, tool: ToolDefinition, rawInput: unknown, o: ExecuteOptions): Promise<ExecuteOutcome> {
  const full = `${plugin}_${tool.name}`;
  try {
    const input = await check(tool.input, rawInput);
    if (!input.success) {
      return { ok: false, error: { message: `Invalid arguments for ${full}: ${issueText(input.issues)}`, code: 'invalid_arguments', category: 'validation', retryable: false } };
    }
    const unset = missingSetting(plugin, full, o.configSchema, o.config);
    if (unset) return { ok: false, error: unset };
    const ctx: ToolContext = {
      signal: o.signal,
      config: { ...o.config },
      tool: tool.name,
      callId: o.callId,
      reportProgress: (p) => {
        if (o.signal.aborted) return;
        const progress = Number(p?.progress);
        if (!Number.isFinite(progress)) return;
        o.onProgress({
          progress,
          ...(typeof p.total === 'number' && Number.isFinite(p.total) ? { total: p.total } : {}),
          ...(typeof p.message === 'string' ? { message: p.message } : {}),
        });
      },
      log: {
        debug: (m, d) => o.onLog('debug', String(m), d),
        info: (m, d) => o.onLog('info', String(m), d),
        warn: (m, d) => o.onLog('warning', String(m), d),
        error: (m, d) => o.onLog('error', String(m), d),
      },
    };
    let value: unknown;
    try {
      value = await tool.handle(input.output, ctx);
    } catch (err) {
      if (o.signal.aborted && !isToolError(err)) {
        const reason = o.signal.reason instanceof Error ? o.signal.reason.message : String(o.signal.reason ?? 'cancelled');
        return { ok: false, error: { message: `${full} was cancelled: ${reason}`, code: 'cancelled', category: 'internal', retryable: false } };
      }
      return { ok: false, error: toErrorPayload(err, full) };
    }
    const output = await check(tool.output, value);
    if (!output.success) {
      // Nothing returned where a value is expected is usually a missing `return` in handle.
      const hint = value === undefined ? ' (handle returned undefined: is a `return` missing?)' : '';
      return { ok: false, error: { message: `${full} returned output that does not match its output schema: ${issueText(output.issues)}${hint}`, code: 'internal', category: 'internal', retryable: false } };
    }
    return { ok: true, value: output.output === undefined ? null : output.output };
  } catch (err) {
    return { ok: false, error: toErrorPayload(err, full) };
  }
}
