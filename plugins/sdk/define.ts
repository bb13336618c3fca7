/**
 * definePlugin / defineTool: the one declaration of a plugin. Everything else (JSON Schemas,
 * dist/tools.json, package metadata checks) is derived from it by `opentabs plugin build`.
 */
import type { ToolAnnotations } from '../../server/protocol/tool-annotations.ts';
import type * as v from 'valibot';
import type { ToolErrorCategory } from './errors.ts';

import type { ConfigField, ConfigSchema } from '../../server/protocol/plugin-manifest.ts';

/** Settings field types: defined with the tools.json format (server/protocol/plugin-manifest.ts). */
export { CONFIG_FIELD_TYPES, type ConfigField, type ConfigFieldType, type ConfigSchema } from '../../server/protocol/plugin-manifest.ts';

type FieldValue<F extends ConfigField> = F['type'] extends 'number' ? number : F['type'] extends 'boolean' ? boolean : F extends { options: readonly (infer O)[] } ? O : string;

/** Resolved settings type for a configSchema: `ctx.config as ConfigOf<typeof configSchema>`. */
export type ConfigOf<S extends ConfigSchema> = {
  [K in keyof S]: S[K] extends { required: true } | { default: unknown } ? FieldValue<S[K]> : FieldValue<S[K]> | undefined;
};

export type LogFn = (message: string, data?: unknown) => void;

export interface ToolContext<Config = Record<string, unknown>> {
  /** Aborted when the call is cancelled (client cancel, timeout, tab closing). Pass it to fetches. */
  signal: AbortSignal;
  /** The plugin's resolved settings (configSchema defaults + what the user saved). */
  config: Config;
  /** Progress reaches the MCP client as notifications/progress and extends the call's timeout. */
  reportProgress(p: { progress: number; total?: number; message?: string }): void;
  /** Logs reach MCP clients as notifications/message and the plugin's log buffer. */
  log: { debug: LogFn; info: LogFn; warn: LogFn; error: LogFn };
  /** Short tool name and the dispatch id of this call. */
  tool: string;
  callId: string;
}

type AnySchema = v.GenericSchema | v.GenericSchemaAsync;

export interface ToolDefinition<I extends AnySchema = AnySchema, O extends AnySchema = AnySchema, Config = Record<string, unknown>> {
  /** snake_case; clients see `<plugin>_<name>`. */
  name: string;
  /** What the tool does, for the AI: when to use it and what it returns. */
  description: string;
  /** valibot object schema of the arguments. */
  input: I;
  /** valibot schema of the result; the runtime checks every result against it. */
  output: O;
  /**
   * MCP hints for clients: readOnlyHint for tools that change nothing, destructiveHint: false for
   * writes that only add or update, idempotentHint, openWorldHint, title.
   */
  annotations?: ToolAnnotations;
  handle(input: v.InferOutput<I>, ctx: ToolContext<Config>): Promise<v.InferInput<O>> | v.InferInput<O>;
}

export function defineTool<I extends AnySchema, O extends AnySchema, Config = Record<string, unknown>>(
  def: ToolDefinition<I, O, Config>,
): ToolDefinition<I, O, Config> {
  return def;
}

export interface PluginDefinition<S extends ConfigSchema = ConfigSchema> {
  /** Lowercase, hyphenated; must match the package name opentabs-plugin-<name>. */
  name: string;
  displayName: string;
  description: string;
  /** Chrome match patterns of the app's pages; `http://127.0.0.1:3000/*` matches only port 3000, a host without a port any port. */
  urlPatterns: string[];
  excludePatterns?: string[];
  homepage?: string;
  /** Inline SVG markup for the side panel. */
  iconSvg?: string;
  configSchema?: S;
  /** True when the page is logged in and the app is usable; tools are only called when ready. */
  isReady(): boolean | Promise<boolean>;
  // Tools are heterogeneous; each keeps its own types at its defineTool call.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: ToolDefinition<any, any, any>[];
}

/** Marks an object as a plugin definition (so the build can find it among a module's exports). */
export const PLUGIN_MARKER = '__opentabsPlugin';

export function definePlugin<S extends ConfigSchema>(def: PluginDefinition<S>): PluginDefinition<S> {
  Object.defineProperty(def, PLUGIN_MARKER, { value: true, enumerable: false });
  return def;
}

export function isPluginDefinition(x: unknown): x is PluginDefinition {
  return typeof x === 'object' && x !== null && (x as Record<string, unknown>)[PLUGIN_MARKER] === true;
}

export type { ToolErrorCategory };
