/**
 * Every built-in tool the extension implements, by full name. test/unit/catalog-parity.test.ts
 * checks these names against server/tools/browser-catalog.ts (minus the server-served ones).
 */
import type { ToolGroup } from './types.ts';
import { tabTools } from './tabs.ts';
import { extensionTools } from './extension.ts';

export const TOOL_HANDLERS: ToolGroup = { ...tabTools, ...extensionTools };
