import { ToolError } from '../shared/tool-error.ts';
import type { Handlers } from './types.ts';

export const pseudoStateTools = {
  async browser_force_pseudo_state() {
    throw new ToolError('not_available', 'Not implemented yet');
  },
} satisfies Partial<Handlers>;
