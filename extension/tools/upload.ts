import { ToolError } from '../shared/tool-error.ts';
import type { Handlers } from './types.ts';

export const uploadTools = {
  async browser_upload_file() {
    throw new ToolError('not_available', 'Not implemented yet');
  },
} satisfies Partial<Handlers>;
