/**
 * Is a tool's schema (a plugin's input or output schema, a page tool's input schema) a JSON Schema
 * the server can validate with? Checked against the JSON Schema draft-07 meta-schema as data,
 * compiling nothing per schema. `$schema` is set aside first: arguments are validated with
 * draft-07 semantics whatever draft a schema names (validate.ts), and a schema naming a draft Ajv
 * does not carry (2020-12) must be judged, not make Ajv throw. Never throws.
 *
 * The meta-schema's validator is precompiled in the start-up bundle (builtin-validators.ts), where
 * the first check costs no meta-schema compile (≈ 55–60 ms cold); from source it is compiled once,
 * with the options every validator is compiled with (AJV_OPTIONS), as the precompiled one is.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { ajvClass } from './ajv.ts';
import { AJV_OPTIONS, compilableSchema } from './validate.ts';

/** The draft-07 meta-schema as Ajv registers it. */
export const DRAFT_07_META_SCHEMA = 'http://json-schema.org/draft-07/schema';

let metaValidator: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (metaValidator) return metaValidator;
  const precompiled = (require('./builtin-validators.ts') as typeof import('./builtin-validators.ts')).PRECOMPILED_META_SCHEMA;
  if (precompiled) return (metaValidator = precompiled);
  const fn = new (ajvClass())(AJV_OPTIONS).getSchema(DRAFT_07_META_SCHEMA);
  if (!fn) throw new Error(`Ajv carries no ${DRAFT_07_META_SCHEMA}`);
  return (metaValidator = fn);
}

/** Why `schema` is not a usable JSON Schema (Ajv's wording: "data/properties/n/type must be …"), or null. */
export function schemaProblem(schema: unknown): string | null {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return 'must be a JSON object';
  try {
    const check = validator();
    if (check(compilableSchema(schema as Record<string, unknown>))) return null;
    return errorsText(check.errors ?? []);
  } catch (err) {
    // A schema nested deeper than the checker's recursion can go (RangeError), for one.
    return `cannot be checked: ${String((err as Error)?.message ?? err).slice(0, 200)}`;
  }
}

/** As Ajv's errorsText: each error as `data<path> <message>`, joined by ", ". */
function errorsText(errors: readonly ErrorObject[]): string {
  return errors.length === 0 ? 'is not valid' : errors.map((e) => `data${e.instancePath} ${e.message ?? 'is invalid'}`).join(', ');
}

