/**
 * What a caller is told while its call waits for the user's approval: the same words over MCP
 * (a log message, and progress when the client asked for it), over streaming REST and in
 * `opentabs tool call`'s status line, so nobody waits two minutes in silence.
 */
import { runnableCommands } from '../cli-command.ts';

export type ApprovalEvent =
  | { state: 'waiting'; id: string; expiresAt: number; timeoutMs: number; message: string }
  | { state: 'approved' | 'denied'; id: string };

export function approvalWaitMessage(tool: string, id: string, timeoutMs: number): string {
  return runnableCommands(
    `Waiting for approval of ${tool} in the OpenTabs side panel (up to ${Math.round(timeoutMs / 1000)} s); ` +
      `or run \`opentabs approve ${id}\` to allow it (\`opentabs deny ${id}\` to refuse).`,
  );
}
