/**
 * The built-in tools' input validators compiled ahead of time, by tool name, and the draft-07
 * meta-schema's (schema-check.ts). Empty here, so from source validate.ts compiles each one on its
 * tool's first call. The start-up bundle replaces this module with Ajv's standalone code for every
 * built-in input schema, generated when the bundle is built (builtin-validators-source.ts): a
 * compile costs ≈ 3.5 ms and ≈ 0.2–0.4 MB of memory that stays, per tool, on its first call; a
 * precompiled validator costs neither.
 */
import type { ValidateFunction } from 'ajv';

export const PRECOMPILED_BUILTINS: Readonly<Record<string, ValidateFunction>> = {};

/** The JSON Schema draft-07 meta-schema's validator (schema-check.ts), when precompiled. */
export const PRECOMPILED_META_SCHEMA: ValidateFunction | undefined = undefined;
