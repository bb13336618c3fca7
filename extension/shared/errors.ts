/**
 * A tool failure raised inside the extension. The dispatcher turns it into the JSON-RPC error the
 * server expects for tool.dispatch: code -32000, data = ToolErrorData, message = human text.
 */
import type { ToolErrorData } from '../../server/protocol/methods.ts';

export class ToolFailure extends Error {
  constructor(
    public readonly code: string,
    message: string,
    public readonly extra: Omit<ToolErrorData, 'code'> = {},
  ) {
    super(message);
    this.name = 'ToolFailure';
  }

  get data(): ToolErrorData {
    return { code: this.code, ...this.extra };
  }
}

export const failures = {
  tabClosed: (tabId: number, why = 'was closed') =>
    new ToolFailure('tab_closed', `Tab ${tabId} ${why} before the call finished; retry, the tool picks a matching tab again.`, { category: 'not_found', retryable: true }),
  noTab: (tabId: number) => new ToolFailure('tab_closed', `No tab with id ${tabId}; call browser_list_tabs for current ids.`, { category: 'not_found', retryable: false }),
  invalid: (message: string) => new ToolFailure('invalid_arguments', message, { category: 'validation', retryable: false }),
  internal: (message: string) => new ToolFailure('internal', message, { category: 'internal', retryable: false }),
};

/** Any thrown value → ToolFailure (Chrome API errors become `tool_error`). */
export function toFailure(err: unknown): ToolFailure {
  if (err instanceof ToolFailure) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/No tab with id/i.test(message)) return new ToolFailure('tab_closed', `${message}; call browser_list_tabs for current ids.`, { category: 'not_found' });
  return new ToolFailure('tool_error', message || 'Unknown error', { category: 'internal' });
}
