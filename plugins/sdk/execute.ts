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

/**
 * A result as the page channel sends it: its JSON text, or the error naming the tool when JSON
 * cannot carry it (a cycle, a BigInt) or it is over PLUGIN_RESULT_MAX_BYTES (the extension would
 * refuse it without knowing the tool).
 */
export function sendableResult(fullName: string, value: unknown): { ok: true; json: string } | { ok: false; error: ErrorPayload } {
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch (err) {
    const why = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, ' ').trim();
    return {
      ok: false,
      error: {
        message: `${fullName} returned a value that cannot be sent as JSON (${why}); return plain data without circular references or BigInt values`,
        code: 'unserializable_result',
        category: 'internal',
        retryable: false,
      },
    };
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
