/** Applying a settings change: merge onto what is saved (null clears a field), then validate. */
import { OpenTabsError } from '../errors.ts';
import { isForbiddenKey, validateSettings } from '../protocol/plugin-manifest.ts';
import type { ConfigField, ConfigSchema } from './types.ts';

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

/** A value for `key=…` that runs as typed in a shell: a select's first choice, `true`, else a quoted placeholder. */
function settingExample(field: ConfigField): string {
  const first = field.type === 'select' ? field.options?.[0] : undefined;
  if (first !== undefined) return /^[\w.:/@-]+$/.test(first) ? first : `'${first.replace(/'/g, `'\\''`)}'`;
  if (field.type === 'boolean') return 'true';
  return `'<${field.type === 'url' ? 'https://…' : field.type}>'`;
}

/** The error for a call of a plugin whose required setting `key` is not set (nothing was asked or run). */
export function settingRequiredError(toolName: string, plugin: string, key: string, field: ConfigField): OpenTabsError {
  const label = field.label ? ` (${field.label})` : '';
  const choices = field.type === 'select' && field.options?.length ? `, one of ${field.options.join(', ')}` : '';
  return new OpenTabsError(
    'setting_required',
    `${toolName} did not run: the ${plugin} plugin's setting "${key}"${label} is required and not set${choices}. ` +
      `Ask the user to set it in the OpenTabs side panel (the plugin's settings) or with \`opentabs plugin configure ${plugin} ${key}=${settingExample(field)}\`, then call again.`,
    { category: 'validation' },
    400,
  );
}
