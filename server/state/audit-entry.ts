/** One audit log entry: a tool call, as audit.log stores it and /audit returns it. */
export interface AuditError {
  code: string;
  message: string;
  category?: string;
}

export interface AuditEntry {
  timestamp: string;
  tool: string;
  plugin: string;
  success: boolean;
  durationMs: number;
  error?: AuditError;
}
