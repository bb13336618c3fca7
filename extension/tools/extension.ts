/** The `extension` group of built-in tools. */
import type { ToolGroup } from './types.ts';

export const extensionTools: ToolGroup = {
  async extension_get_state(_input, ctx) {
    return { value: await ctx.extensionState() };
  },
};
