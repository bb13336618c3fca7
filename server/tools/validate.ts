/**
 * Argument validation with Ajv. Each tool's validator is compiled the first time the tool is
 * called and reused after (never compiled per call), by the tool's schema object, for the whole
 * process: BUILTIN_VALIDATORS (whose schemas never change, precompiled in the start-up bundle) and
 * TOOL_VALIDATORS for plugin and page tools. A catalog snapshot made because a page registered
 * tools or a permission changed therefore compiles nothing again; a plugin reloaded or a page's
 * tools replaced bring new schema objects, and the old validators go once nothing holds their
 * schema (a WeakMap). A compile costs ≈ 1.3–3.5 ms and ≈ 0.2 MB that a snapshot-per-compile
 * scheme paid again after every catalog change. A schema Ajv cannot compile is reported as a
 * failure naming the tool, not a crash.
 *
 * `validateSchema: false`: every schema was checked against the JSON Schema meta-schema where it
 * came in (plugin discovery, a page's registration, the built-ins' unit test). Checking again would
 * compile the meta-schema into every fresh Ajv instance, ≈ 55–60 ms each.
 */
import type Ajv from 'ajv';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { COMPILES_PER_AJV, ajvClass } from './ajv.ts';

/** How every argument validator is compiled: at run time here, and ahead of time for the built-ins (builtin-validators-source.ts). */
export const AJV_OPTIONS: Options = { strict: false, allErrors: false, validateFormats: false, logger: false, verbose: true, validateSchema: false };

/** The schema as compiled: plugin schemas may name a draft in $schema; the semantics we need are draft-07's. */
export function compilableSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

export interface ValidationFailure {
  /** JSON pointer of the bad field ("" = the arguments object itself). */
  path: string;
  message: string;
  /** true when the tool's own schema is broken (not the caller's fault). */
  schemaError?: boolean;
}

type Compiled = ValidateFunction | { error: string };

export class SchemaValidators {
  private ajv?: Ajv;
  private compiles = 0;
  /** By the tool's schema object: never the object Ajv sees (compilableSchema copies it), so no Ajv keeps a key alive. */
  private compiled = new WeakMap<object, Compiled>();

  /**
   * `precompiled`: validators by key, compiled ahead of time from the same schemas, used instead of
   * compiling. `options`: Ajv options on top of AJV_OPTIONS (page tools: PAGE_REGEXP).
   */
  constructor(
    private readonly precompiled: () => Readonly<Record<string, ValidateFunction>> = () => ({}),
    private readonly options: Options = {},
  ) {}

  /** `key` names the tool (it finds a precompiled validator); `schema` is its input schema, the cache key. */
  validate(key: string, schema: Record<string, unknown>, value: unknown): ValidationFailure | null {
    const fn = this.compiledFor(key, schema);
    if (typeof fn !== 'function') return { path: '', message: `the tool's input schema is invalid: ${fn.error}`, schemaError: true };
    let valid: boolean;
    try {
      valid = fn(value) as boolean;
    } catch (err) {
      // A schema that applies itself without end (`allOf` or `$ref` leading back to itself, with
      // no step into the data) compiles, then overflows the stack on every call: it is kept as
      // invalid, so later calls are answered without running it.
      const error = String((err as Error)?.message ?? err);
      this.compiled.set(schema, { error });
      return { path: '', message: `the tool's input schema is invalid: ${error}`, schemaError: true };
    }
    if (valid) return null;
    return describe(fn.errors?.[0]);
  }

  /** Compile `schema` now (kept for its calls, like any other): why Ajv refuses it, or null. */
  problem(key: string, schema: Record<string, unknown>): string | null {
    const fn = this.compiledFor(key, schema);
    return typeof fn === 'function' ? null : fn.error;
  }

  private compiledFor(key: string, schema: Record<string, unknown>): Compiled {
    let fn = this.compiled.get(schema);
    if (fn === undefined) {
      const precompiled = this.precompiled();
      fn = Object.hasOwn(precompiled, key) ? precompiled[key]! : this.compile(schema);
      this.compiled.set(schema, fn);
    }
    return fn;
  }

  private compile(schema: Record<string, unknown>): Compiled {
    // An Ajv keeps every function it compiled, and each function its Ajv: a fresh instance every
    // COMPILES_PER_AJV compiles bounds what one validator still in use keeps alive with it.
    if (this.ajv === undefined || this.compiles >= COMPILES_PER_AJV) {
      this.ajv = new (ajvClass())({ ...AJV_OPTIONS, ...this.options });
      this.compiles = 0;
    }
    this.compiles++;
    try {
      return this.ajv.compile(compilableSchema(schema));
    } catch (err) {
      return { error: String((err as Error)?.message ?? err) };
    }
  }
}

/**
 * The built-in tools' validators, shared by every catalog snapshot: compiled ahead of time in the
 * start-up bundle (builtin-validators.ts), else on first use.
 */
// Required on the first built-in call, not imported at start-up: in the bundle it is ≈ 300 KB of code.
export const BUILTIN_VALIDATORS = new SchemaValidators(() => (require('./builtin-validators.ts') as typeof import('./builtin-validators.ts')).PRECOMPILED_BUILTINS);

/**
 * Regular expressions of tool schemas (`pattern`) are never run on the server, on the agent's
 * arguments: one such as ^(a+)+$, or a plugin author's ^(\w+\s?)*$ for "words", against 40
 * characters an agent is told to send (by a page tool's description, a plugin's, or text on any
 * page it reads) backtracks for hours, blocking every client. A page writes its tools' patterns;
 * a plugin's come from its package. They are compiled (a pattern that is not a regular expression
 * is still refused) but every string passes here; the page checks them (a plugin's handler gets its
 * input through its own schema in the SDK, which refuses it as invalid_arguments). Page tools may
 * not use patternProperties (page-tools.ts), where this applies every sub-schema to every key.
 */
const PAGE_REGEXP = Object.assign(
  (pattern: string, flags: string) => {
    new RegExp(pattern, flags);
    return { test: (_s: string) => true };
  },
  { code: 'PAGE_REGEXP' },
);

/**
 * Plugin tools' validators, shared by every catalog snapshot. Ids are not registered in the shared
 * Ajv (addUsedSchema: false): two tools whose schemas carry the same `$id` (a copied schema, a
 * common vocabulary URL, a plugin update that changed one) each keep their own validator instead of
 * the second failing with "schema with key or id … already exists"; references inside a schema to
 * its own ids still resolve. Patterns are not run here (PAGE_REGEXP).
 */
export const TOOL_VALIDATORS = new SchemaValidators(undefined, { code: { regExp: PAGE_REGEXP }, addUsedSchema: false });

/**
 * Page tools' (WebMCP) validators, shared by every catalog snapshot. One Ajv compiles the schemas
 * of every page, so a schema's `$id` is not registered in it (addUsedSchema: false): a page
 * claiming another origin's `$id` first made that origin's tool fail ("schema with key or id …
 * already exists"), and so did a page's own schema sent again changed under the same `$id`.
 */
export const PAGE_TOOL_VALIDATORS = new SchemaValidators(undefined, { code: { regExp: PAGE_REGEXP }, addUsedSchema: false });

function describe(e: ErrorObject | undefined): ValidationFailure {
  if (!e) return { path: '', message: 'arguments do not match the input schema' };
  let path = e.instancePath;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'required') {
    const prop = (e.params as { missingProperty: string }).missingProperty;
    path = `${path}/${escapePointer(prop)}`;
    message = 'is required';
  } else if (e.keyword === 'additionalProperties') {
    const prop = (e.params as { additionalProperty: string }).additionalProperty;
    path = `${path}/${escapePointer(prop)}`;
    // Name the allowed keys so a misspelling is obvious to the caller.
    const allowed = Object.keys((e.parentSchema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
    message = `is not an allowed property ("${prop}"); allowed: ${allowed.length ? allowed.join(', ') : 'none'}`;
  } else if (e.keyword === 'enum') {
    const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
    message = `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`;
  }
  return { path, message };
}

function escapePointer(s: string): string {
  return s.replace(/~/g, '~0').replace(/\//g, '~1');
}
