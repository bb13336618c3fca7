/**
 * What a caller is told while its call waits for the user's approval: the same words over MCP
 * (a log message, and progress when the client asked for it), over streaming REST and in
 * `opentabs tool call`'s status line, so nobody waits two minutes in silence.
 */
export type ApprovalEvent =
  | { state: 'waiting'; id: string; expiresAt: number; timeoutMs: number; message: string }
  | { state: 'approved' | 'denied'; id: string };

/**
 * Said to the caller, which is often the agent itself: so it names where the user decides, never
 * a command that decides (an agent with a shell could run `opentabs approve` on its own call).
 * `opentabs tool call` adds that command on a terminal, where a person reads it (cli/status-line.ts).
 */
export function approvalWaitMessage(tool: string, timeoutMs: number): string {
  return `Waiting for approval of ${tool} in the OpenTabs side panel (up to ${Math.round(timeoutMs / 1000)} s); only the user can allow it.`;
}
