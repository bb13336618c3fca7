/**
 * How a built-in tool is declared: once, here, with a valibot input schema. The server lists it
 * (the JSON Schema is generated from the valibot schema) and validates calls against it; the
 * extension's handler table is typed from the same declaration (extension/tools/types.ts), so a
 * missing or extra handler, or a handler reading an argument the schema does not have, fails
 * `tsc`.
 */
import type * as v from 'valibot';
import type { Permission } from '../methods.ts';
import type { ToolAnnotations } from '../tool-annotations.ts';

export const BUILTIN_GROUPS = ['tabs', 'windows', 'reading', 'acting', 'console', 'network', 'storage', 'data', 'extension'] as const;
export type BuiltinGroup = (typeof BUILTIN_GROUPS)[number];

/** A tool's arguments are always one object (strict: unknown keys are refused). */
export type ToolInputSchema = v.StrictObjectSchema<v.ObjectEntries, v.ErrorMessage<v.StrictObjectIssue> | undefined>;

export interface BuiltinToolDecl {
  /** browser_*, extension_* or plugin_* */
  readonly name: string;
  readonly group: BuiltinGroup;
  /** One or two sentences the model reads: what it does and what it returns. */
  readonly description: string;
  readonly input: ToolInputSchema;
  /** Optional: what structuredContent holds, listed as the tool's outputSchema. */
  readonly output?: v.GenericSchema;
  /**
   * The permission the tool has until the user sets one. The rule (README, "What needs approval"):
   * a tool that only reads or drives what is open now — tabs, windows, tab groups, a tab's page,
   * its console and the traffic recorded in it — or OpenTabs itself may start `auto`. A tool that
   * reveals what the user did or keeps outside the open tabs (history, bookmarks, downloads and
   * their URLs, recently closed tabs, cookies and site storage) or acts beyond a page (writes or
   * sends a file, deletes site data, runs code, records or changes traffic, writes config) starts
   * `ask`, or `off` when it reads secrets or runs any code: an agent a page has prompt-injected
   * calls `auto` tools without the user seeing. So no tool of the `data` or `storage` group, nor one
   * that changes something and declares a `risk`, starts `auto` (a test checks it for every tool).
   */
  readonly defaultPermission: Permission;
  /** MCP hints; only the ones that differ from MCP's defaults need saying. */
  readonly annotations: ToolAnnotations;
  /** Why this tool deserves care, shown in the side panel (absent for ordinary tools). */
  readonly risk?: string;
  /** Answered by the server itself (no extension round trip), e.g. plugin_list_tabs reads hub state. */
  readonly servedBy?: 'server';
}

/** Declare one tool; `const` keeps the literal name and schema types for the handler table. */
export function tool<const D extends BuiltinToolDecl>(decl: D): D {
  return decl;
}

/** The arguments a handler receives, as the client sent them (validated; no defaults filled in). */
export type InputOf<D extends BuiltinToolDecl> = v.InferInput<D['input']>;

/** What a handler's `value` must be: the declared output, or anything when none is declared. */
export type OutputOf<D extends BuiltinToolDecl> = D extends { output: infer O extends v.GenericSchema } ? v.InferInput<O> : unknown;

/**
 * A handler table keyed by tool name, each typed from its declaration: the input it receives and,
 * where an output schema is declared, the `value` it returns.
 */
export type HandlerTable<D extends BuiltinToolDecl, Ctx, R extends { value?: unknown }> = {
  [T in D as T['name']]: (input: InputOf<T>, ctx: Ctx) => Promise<Omit<R, 'value'> & { value?: OutputOf<T> }>;
};
