/**
 * The shapes of catalog entries and of the listings made from them (MCP tools/list, GET /tools).
 * A module of its own so the page-tool registry and the call path can name them without
 * importing the catalog (no import cycles).
 */
import type { Permission } from '../protocol/methods.ts';
import type { ToolAnnotations } from '../protocol/tool-annotations.ts';

export interface CatalogTool {
  /** Name clients call: `<plugin>_<tool>` or `browser_*` / `extension_*`. */
  name: string;
  /** Plugin name; "browser" for built-ins. */
  plugin: string;
  /** Name inside the plugin (what tool.dispatch carries for plugin tools); the full name for built-ins. */
  shortName: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** JSON Schema of structuredContent, when the tool declares one (listed as outputSchema). */
  outputSchema?: Record<string, unknown>;
  permission: Permission;
  kind: 'browser' | 'plugin' | 'page';
  /** Answered by the server itself, without the extension. */
  servedBy?: 'server';
  /** MCP hints (read-only, destructive …) listed with the tool. */
  annotations?: ToolAnnotations;
  /** Page tools (kind 'page'): the tab that registered the tool and that tab's origin. */
  tabId?: number;
  origin?: string;
  /** Page tools: the tab's URL when it registered the tool (for the approval card). */
  url?: string;
  /** Page tools: pageToolHash of what the page offers (name, description, input schema), which a card's Always allow is bound to. */
  pageToolHash?: string;
  /** Page tools asked about again: why (new or changed since the user chose Always allow), said on the card. */
  approvalNote?: string;
}

/** One entry of MCP tools/list. */
export interface McpToolEntry {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  annotations?: ToolAnnotations;
}

/** One entry of GET /tools. */
export interface ToolListing {
  name: string;
  description: string;
  plugin: string;
  permission: Permission;
  inputSchema: Record<string, unknown>;
}
