/**
 * Ajv, loaded on first use rather than at start-up: evaluating it costs ≈ 16 ms, which would
 * otherwise sit between process start and the port being bound (and a server with no plugins
 * only needs it on the first tool call).
 */
import type AjvType from 'ajv';

let AjvClass: typeof AjvType | null = null;

export function ajvClass(): typeof AjvType {
  AjvClass ??= (require('ajv') as { default: typeof AjvType }).default;
  return AjvClass;
}
