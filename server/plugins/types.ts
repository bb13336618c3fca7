/**
 * A plugin as the server knows it after discovery. Produced by server/plugins (from a plugin's
 * package.json + dist/tools.json + dist/adapter.js written by `opentabs plugin build`),
 * consumed by the catalog, the hub (sync.full) and /health.
 */
// The settings field types are declared once, in the SDK that plugin authors write them with;
// the server reads the same shape back from dist/tools.json.
export type { ConfigField, ConfigFieldType, ConfigSchema } from '../protocol/plugin-manifest.ts';
import type { ToolAnnotations } from '../protocol/tool-annotations.ts';
import type { ConfigSchema } from '../protocol/plugin-manifest.ts';

export interface LoadedTool {
  /** Short name as declared ("list_items"). */
  name: string;
  /** Prefixed name ("myapp_list_items"). */
  fullName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

export interface LoadedPlugin {
  name: string;
  displayName: string;
  description: string;
  version: string;
  /** npm package name (opentabs-plugin-<name> or @scope/opentabs-plugin-<name>). */
  packageName: string;
  urlPatterns: string[];
  excludePatterns: string[];
  homepage?: string;
  iconSvg?: string;
  configSchema?: ConfigSchema;
  source: 'local' | 'npm';
  /** Plugin folder on disk. */
  path: string;
  sdkVersion: string | null;
  /** Adapter file relative to the installed extension folder: "adapters/<name>-<hash>.js". */
  adapterFile: string;
  adapterHash: string;
  tools: LoadedTool[];
}

/** Why a plugin folder could not be loaded (→ /health failedPlugins). */
export interface FailedPlugin {
  path: string;
  error: string;
  name?: string;
}

/**
 * Permission of a plugin's tools when config.json says nothing. Installing or adding a plugin
 * through OpenTabs writes an explicit `ask` default for it (server/plugins/manager.ts), so this
 * only applies to plugins that appear some other way (e.g. a hand-edited localPlugins list).
 */
export const DEFAULT_PLUGIN_PERMISSION = 'ask' as const;
