import { ToolError } from '../shared/tool-error.ts';
import type { Handlers } from './types.ts';

export const pdfTools = {
  async browser_print_pdf() {
    throw new ToolError('not_available', 'Not implemented yet');
  },
} satisfies Partial<Handlers>;
