/**
 * Ajv, loaded on first use rather than at start-up: evaluating it costs ≈ 16 ms, which would
 * otherwise sit between process start and the port being bound (and a server with no plugins
 * only needs it on the first tool call).
 */
import type AjvType from 'ajv';

let AjvClass: typeof AjvType | null = null;

/**
 * Schemas one Ajv instance compiles before a fresh one takes over, wherever schemas that come and
 * go (plugins, pages) are compiled. An Ajv keeps every function it compiled in its code-generation
 * scope (removeSchema() does not clear it), so one instance for every compile grows without bound;
 * a fresh one costs ≈ 1 ms when it compiles no meta-schema.
 */
export const COMPILES_PER_AJV = 64;

export function ajvClass(): typeof AjvType {
  AjvClass ??= (require('ajv') as { default: typeof AjvType }).default;
  return AjvClass;
}
