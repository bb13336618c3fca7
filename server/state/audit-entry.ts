/** One audit log entry: a tool call, as audit.log stores it and /audit returns it. */
export interface AuditError {
  code: string;
  message: string;
  category?: string;
}

/**
 * How the user answered a call that asked (`ask` permission): allowed it, allowed it and every
 * later call of the tool ("Always allow"), or denied it. Absent for calls that did not ask, or
 * that ended without an answer (timed out, cancelled).
 */
export type AuditApproval = 'allowed' | 'always' | 'denied';
export const AUDIT_APPROVALS: readonly AuditApproval[] = ['allowed', 'always', 'denied'];

export interface AuditEntry {
  timestamp: string;
  tool: string;
  plugin: string;
  success: boolean;
  durationMs: number;
  error?: AuditError;
  approval?: AuditApproval;
}
