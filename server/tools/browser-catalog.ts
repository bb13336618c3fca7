/** The built-in tools (builtin-defs.ts), their names, and the plugin name they are listed under. */
import { BROWSER_TOOLS } from './builtin-defs.ts';

export { BROWSER_TOOLS, type BrowserToolDef } from './builtin-defs.ts';

export const BROWSER_TOOL_NAMES = BROWSER_TOOLS.map((t) => t.name);
export const BROWSER_PLUGIN = 'browser';
