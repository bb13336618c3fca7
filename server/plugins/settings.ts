/** Applying a settings change: merge onto what is saved (null clears a field), then validate. */
import { OpenTabsError } from '../errors.ts';
import { validateSettings } from './manifest.ts';
import type { ConfigSchema } from './types.ts';

export function mergeSettings(
  plugin: string,
  schema: ConfigSchema | undefined,
  saved: Record<string, unknown> | undefined,
  patch: Record<string, unknown>,
): Record<string, unknown> {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw new OpenTabsError('invalid_settings', 'settings must be a JSON object of setting name → value', 400, { category: 'validation' });
  }
  // Merge so `configure key=value` changes one field without dropping the others.
  const merged: Record<string, unknown> = { ...(saved ?? {}), ...patch };
  for (const [k, val] of Object.entries(patch)) if (val === null) delete merged[k];
  const problem = validateSettings(schema, merged);
  if (problem) {
    const field = problem.slice(0, problem.indexOf(':'));
    throw new OpenTabsError('invalid_settings', `Invalid settings for ${plugin}: ${problem}`, 400, { category: 'validation', path: `/settings/${field}` });
  }
  return merged;
}
