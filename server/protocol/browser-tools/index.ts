/**
 * Every built-in tool, declared once (see declare.ts). The server's catalog lists and validates
 * them from here; the extension implements each one (extension/tools/), its handler table typed
 * from these declarations.
 */
import { actingTools } from './acting.ts';
import { consoleTools } from './console.ts';
import { dataTools } from './data.ts';
import { extensionTools } from './extension.ts';
import { inputPageTools } from './input-page.ts';
import { networkTools } from './network.ts';
import { readingTools } from './reading.ts';
import { storageTools } from './storage.ts';
import { tabsTools } from './tabs.ts';
import { windowsTools } from './windows.ts';

export const BUILTIN_TOOLS = [
  ...tabsTools,
  ...windowsTools,
  ...readingTools,
  ...actingTools,
  ...storageTools,
  ...consoleTools,
  ...networkTools,
  ...dataTools,
  ...extensionTools,
  ...inputPageTools,
] as const;

export type BuiltinTool = (typeof BUILTIN_TOOLS)[number];
/** The tools the extension runs (the rest the server answers itself). */
export type ExtensionTool = Exclude<BuiltinTool, { servedBy: 'server' }>;
export type { BuiltinToolDecl, BuiltinGroup, HandlerTable, InputOf, OutputOf } from './declare.ts';
