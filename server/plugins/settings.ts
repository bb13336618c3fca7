/** Applying a settings change: merge onto what is saved (null clears a field), then validate. */
import { OpenTabsError } from '../errors.ts';
import { isForbiddenKey, validateSettings } from '../protocol/plugin-manifest.ts';
import type { ConfigSchema } from './types.ts';

export function mergeSettings(
  plugin: string,
  schema: ConfigSchema | undefined,
  saved: Record<string, unknown> | undefined,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new OpenTabsError('invalid_settings', 'settings must be a JSON object of setting name → value', { category: 'validation' });
  }
  // JSON.parse makes "__proto__" an own key; on a plain object, writing it or "constructor" /
  // "prototype" would reach Object.prototype. No setting has such a name: refuse it by name.
  for (const k of Object.keys(patch)) {
    if (isForbiddenKey(k)) {
      throw new OpenTabsError('invalid_settings', `Invalid settings for ${plugin}: "${k}" cannot be a setting name`, { category: 'validation', path: `/settings/${k}` });
    }
  }
  // Merge so `configure key=value` changes one field without dropping the others; own keys only.
  const merged: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(saved ?? {})) if (!isForbiddenKey(k)) merged[k] = val;
  for (const [k, val] of Object.entries(patch)) {
    if (val === null) delete merged[k];
    else merged[k] = val;
  }
  const problem = validateSettings(schema, merged);
  if (problem) {
    const field = problem.slice(0, problem.indexOf(':'));
    throw new OpenTabsError('invalid_settings', `Invalid settings for ${plugin}: ${problem}`, { category: 'validation', path: `/settings/${field}` });
  }
  return merged;
}
