/**
 * Plugin names, defined once: the form every plugin name has, the names built-in and page tools
 * own, and how a free text (a user's typo, a site's host name) is fitted to a valid name. Kept free
 * of other imports so the side panel can use it (its Record view prints a `plugin create` command).
 */

/** Plugin names: lowercase words joined by hyphens; they prefix tool names as `<plugin>_<tool>`. */
export const PLUGIN_NAME_RE = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Prefixes owned by built-in tools (browser_*, extension_*, opentabs_*, plugin_*), never a plugin name. */
export const RESERVED_PLUGIN_NAMES: readonly string[] = ['browser', 'extension', 'opentabs', 'plugin'];
/** Tools a web page registers are named `tab<tab id>_<name>`: a plugin named `tab<digits>` would share that form. */
export const PAGE_TOOL_PREFIX_RE = /^tab\d+$/;

/** Why `name` cannot be a plugin name because its tools would clash with built-in or page tools, or null. */
export function reservedPluginName(name: string): string | null {
  if (RESERVED_PLUGIN_NAMES.includes(name)) return `"${name}" is reserved: built-in tools are named ${name}_*; pick another plugin name`;
  if (PAGE_TOOL_PREFIX_RE.test(name)) return `"${name}" is reserved: tools a web page registers are named tab<tab id>_*, the form of ${name}_*; pick another plugin name`;
  return null;
}

/**
 * `text` as a plugin name `opentabs plugin create` accepts ("My App", "my_app", "MyApp",
 * "-my--app-" → "my-app"), or null when nothing valid and unreserved comes of it.
 */
export function fitPluginName(text: string): string | null {
  const fit = text
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return PLUGIN_NAME_RE.test(fit) && reservedPluginName(fit) === null ? fit : null;
}
