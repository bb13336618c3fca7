import { ToolError } from '../shared/tool-error.ts';
import type { Handlers } from './types.ts';

export const perfTraceTools = {
  async browser_performance_trace() {
    throw new ToolError('not_available', 'Not implemented yet');
  },
} satisfies Partial<Handlers>;
